"""zarr chunks straight between files and blocks: a local store's chunk files decoded in place.

Reading a region through zarr decodes each chunk into a fresh buffer and
copies it into the result; for blocks that are whole chunks stacked along
the first axis (the blocks :func:`~lazyarr.graph.chunks.aligned_chunks`
chooses), each chunk is one contiguous slab of the block, so its file can be
decompressed directly into that slab: one pass over the decoded bytes
instead of three (allocate, decode, copy). Raw and zstd chunks decode as
their files are read, so no buffer of their encoded bytes is kept. A chunk
that a block needs only part of (a region cut by ``isel``, the last chunk of
an axis that does not fill it) streams through one piece at a time, its part
copied out (:mod:`.chunk_pieces`); a part that is a run of whole rows (cut
along the first axis only, as the time axis' last chunk is) decodes straight
into the block. Writing is the mirror image: the slab is compressed and
written to a temporary file that is renamed over the chunk's (every chunk old
or new, never half written), edge chunks padded and chunks cut across a
block's inner axes gathered piece by piece as they stream, and a chunk that
is all fill value is removed instead when the array does not write empty
chunks, as zarr does. Only layouts whose bytes are plainly the array's bytes
take this way (a local store, C order, native byte order, no filters,
sharding or transposes, compressed by nothing or zstd; blosc for reading,
decoded whole); everything else, and writes of part of a chunk that is not an
edge chunk, go through zarr itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import socket
import sys
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .chunk_pieces import padded_pieces, piece_bytes, read_into, read_part

__all__ = [
    "ChunkFiles",
    "chunk_boxes",
    "chunk_files",
    "contiguous",
    "stream_context_bytes",
    "gathered_bytes",
    "sweep_partials",
]


@dataclass(frozen=True)
class ChunkFiles:
    """Where a zarr array's chunk files are and how to decode one into a buffer."""

    root: str
    chunk_shape: tuple[int, ...]
    dtype: np.dtype
    key_of: Any  # chunk coordinates -> key relative to root (the metadata's own encoding)
    codec: Any  # a numcodecs codec, or None for raw bytes
    writable: bool  # the codec encodes as zarr would (zstd, raw)
    fill_value: Any
    write_empty: bool

    def read_into(self, array: Any, where: tuple[slice, ...], out: np.ndarray) -> None:
        """Fill ``out`` with ``array[where]`` (steps 1): whole chunks decoded in place, a
        chunk cut by the region (or the array's edge) decoded into this thread's chunk
        buffer and its part copied out."""
        for coords, box, local in self._chunks(where):
            dst = out[local]
            if self._whole(box, dst):
                done = self._decode(coords, dst)
            elif self._rows_of_chunk(coords, box, dst):
                done = self._decode_rows(coords, box, dst)
            else:
                done = self._decode_part(coords, box, dst)
            if not done:
                dst[...] = array[box]  # no file (the fill value): zarr decides

    def write_from(self, array: Any, where: tuple[slice, ...], block: np.ndarray) -> None:
        """Store ``block`` at ``array[where]`` (steps 1): whole chunks encoded from place."""
        for coords, box, local in self._chunks(where):
            src = block[local]
            if not (self.writable and src.dtype == self.dtype):
                array[box] = src
            elif self._covers(box) and src.flags.c_contiguous:
                self._encode(coords, src)
            elif self._covers(box) or self._edge(coords, box, array.shape):
                # a chunk cut across the block's inner axes, or padded at the array's edge:
                # piece by piece into its file (far cheaper than zarr's own path for it)
                self._encode_pieces(coords, box, src)
            else:
                array[box] = src  # part of a chunk: zarr merges it with the stored rest

    def _box_in_chunk(self, coords: tuple[int, ...], box: tuple[slice, ...]) -> tuple:
        """``box`` relative to the origin of chunk ``coords``."""
        return tuple(
            slice(b.start - k * c, b.stop - k * c) for b, k, c in zip(box, coords, self.chunk_shape)
        )

    def _chunk_buffer(self) -> np.ndarray:
        """This thread's buffer of one whole chunk (valid until its next use)."""
        size = math.prod(self.chunk_shape)
        flat = np.frombuffer(_scratch(size * self.dtype.itemsize, "copy"), self.dtype, size)
        return flat.reshape(self.chunk_shape)

    def _decode_part(
        self, coords: tuple[int, ...], box: tuple[slice, ...], dst: np.ndarray
    ) -> bool:
        """Decode chunk ``coords`` and copy its part ``box`` into ``dst`` (False when it has
        no file): piece by piece as its file is read where it streams (raw, zstd), else
        decoded whole into this thread's chunk buffer."""
        if self.streams():
            size = math.prod(self.chunk_shape) * self.dtype.itemsize
            part = self._box_in_chunk(coords, box)
            done = self._stream(self.key_of(coords), 0, dst, size, part)
            if done is not None:
                return done
        chunk = self._chunk_buffer()
        if not self._decode(coords, chunk):
            return False
        dst[...] = chunk[self._box_in_chunk(coords, box)]
        return True

    def _rows_of_chunk(
        self, coords: tuple[int, ...], box: tuple[slice, ...], dst: np.ndarray
    ) -> bool:
        """``box`` is a run of whole rows (first-axis slices) of chunk ``coords``: one
        contiguous range of its bytes, which ``dst`` takes whole and in order, and which
        :meth:`_decode_rows` can decode alone."""
        if not (dst.flags.c_contiguous and dst.dtype == self.dtype and self.streams()):
            return False
        inner = self._box_in_chunk(coords, box)[1:]
        return all(b.start == 0 and b.stop == c for b, c in zip(inner, self.chunk_shape[1:]))

    def read_buffer_bytes(self, cuts: bool) -> int:
        """Bytes a thread keeps to read chunks: none of the encoded chunk where it streams
        from its file (raw; zstd keeps its window), the encoded chunk otherwise (blosc), and
        where a block needs part of a chunk (``cuts``), one piece of it as it streams
        (:func:`.chunk_pieces.read_part`) or one whole chunk decoded to copy the part."""
        chunk = math.prod(self.chunk_shape) * self.dtype.itemsize
        if not self.streams():
            return chunk * (2 if cuts else 1)
        own = 0 if self.codec is None else stream_window_bytes(self.codec, chunk)
        piece = piece_bytes(tuple(self.chunk_shape), self.dtype.itemsize)
        return own + (0 if not cuts else chunk if piece is None else piece)

    def _decode_rows(
        self, coords: tuple[int, ...], box: tuple[slice, ...], dst: np.ndarray
    ) -> bool:
        """Decode only the rows ``box`` of chunk ``coords``, straight into ``dst``: the bytes
        before them are decoded and dropped as they stream, the rest never (False when the
        chunk has no file)."""
        row = math.prod(self.chunk_shape[1:]) * self.dtype.itemsize
        skip = (box[0].start - coords[0] * self.chunk_shape[0]) * row
        return self._stream(self.key_of(coords), skip, dst, self.chunk_shape[0] * row)

    def _stream(
        self,
        key: str,
        skip: int,
        dst: np.ndarray,
        size: int,
        part: tuple[slice, ...] | None = None,
    ) -> bool | None:
        """Decode chunk file ``key`` of ``size`` decoded bytes straight from the file (raw,
        or zstd read as it decompresses: no buffer of the encoded chunk) into ``dst``: from
        byte ``skip`` on into the contiguous ``dst``, or ``part`` of the chunk (slices from
        its origin) piece by piece (:func:`.chunk_pieces.read_part`). False when it has no
        file; None when the part has too many pieces to read this way."""
        try:
            with open(os.path.join(self.root, key), "rb", buffering=0) as f:
                return self._stream_from(f, key, skip, dst, size, part)
        except FileNotFoundError:
            return False

    def _stream_from(
        self,
        f: Any,
        key: str,
        skip: int,
        dst: np.ndarray,
        size: int,
        part: tuple[slice, ...] | None,
    ) -> bool | None:
        """:meth:`_stream` from the open chunk file ``f``."""
        raw = self.codec is None
        if raw:  # the bytes as they lie in the file
            stored = os.fstat(f.fileno()).st_size
            if stored != size:
                raise self._corrupt(key, f"has {stored} bytes, expected {size}")
        else:
            problem = _frame_problem(self.codec, memoryview(f.read(_ZSTD_HEADER)), size)
            if problem:
                raise self._corrupt(key, problem)
            f.seek(0)
        try:
            with contextlib.ExitStack() as opened:
                # the bytes: the file's own (raw), or zstd's as it decodes the file
                stream = f
                if not raw:
                    reader = _zstd_reader().stream_reader(f, read_across_frames=False)
                    stream = opened.enter_context(reader)
                if part is not None:
                    return read_part(stream, self.chunk_shape, part, dst)
                view = memoryview(dst).cast("B")
                if skip:
                    stream.seek(skip)
                got = read_into(stream, view)
                if not raw and skip == 0 and got == len(view) == size and stream.read(1):
                    # the whole frame read to its end: its checksum checked, nothing beyond
                    raise ValueError("decodes to more bytes than its chunk holds")
        except ValueError as e:
            raise self._corrupt(key, str(e)) from e
        except _zstd_error() as e:  # a frame that does not decode, met part way
            raise self._corrupt(key, f"does not decode ({e})") from e
        if got != len(view):
            raise self._corrupt(key, f"holds {got} of the {len(view)} bytes expected")
        return True

    def _edge(self, coords: tuple[int, ...], box: tuple[slice, ...], shape: tuple) -> bool:
        """``box`` is all of chunk ``coords`` that lies inside an array of ``shape``."""
        return all(
            b.start == k * c and b.stop == min((k + 1) * c, n)
            for b, k, c, n in zip(box, coords, self.chunk_shape, shape)
        )

    def _padded(self, coords: tuple[int, ...], box: tuple[slice, ...], src: np.ndarray) -> Any:
        """An edge chunk's part ``src`` in a whole chunk, the rest the fill value, as zarr
        stores edge chunks (in this thread's chunk buffer)."""
        chunk = self._chunk_buffer()
        chunk[...] = 0 if self.fill_value is None else self.fill_value
        chunk[self._box_in_chunk(coords, box)] = src
        return chunk

    def _chunks(self, where: tuple[slice, ...]) -> Any:
        """Each chunk under ``where``: its coordinates, its box in the array and in the block."""
        return chunk_boxes(where, self.chunk_shape)

    def _covers(self, box: tuple[slice, ...]) -> bool:
        """The chunk lies whole inside the region."""
        return all(b.stop - b.start == c for b, c in zip(box, self.chunk_shape))

    def _whole(self, box: tuple[slice, ...], part: np.ndarray) -> bool:
        """The chunk lies whole inside the region and is one contiguous slab of the block."""
        return self._covers(box) and part.flags.c_contiguous and part.dtype == self.dtype

    def _encode(self, coords: tuple[int, ...], src: np.ndarray) -> None:
        """Store chunk ``coords`` from the contiguous whole chunk ``src``."""
        if self._removed_if_empty(coords, src):
            return
        if not self.streams():
            self._store(coords, src.nbytes, [self.codec.encode(src)], encoded=True)
        else:
            self._store(coords, src.nbytes, [memoryview(src).cast("B")])

    def _encode_pieces(
        self, coords: tuple[int, ...], box: tuple[slice, ...], src: np.ndarray
    ) -> None:
        """Store chunk ``coords`` from ``src``: all of it that lies inside the array (an
        edge chunk is padded with the fill value, as zarr stores it), not contiguous in
        memory. Streamed piece by piece where the codec allows (:mod:`.chunk_pieces`),
        else gathered or padded whole in this thread's chunk buffer."""
        pieces = padded_pieces(src, self.chunk_shape, self.fill_value) if self.streams() else None
        if pieces is None:
            whole = src.shape == tuple(self.chunk_shape)
            self._encode(coords, contiguous(src) if whole else self._padded(coords, box, src))
        elif not self._removed_if_empty(coords, src):
            size = math.prod(self.chunk_shape) * self.dtype.itemsize
            self._store(coords, size, pieces)

    def streams(self) -> bool:
        """Chunk files are read and written as their bytes come (raw, or zstd through
        ``zstandard``): a chunk decodes straight from its file (its rows alone, or a part
        piece by piece), and an edge chunk is padded piece by piece, not in a whole chunk."""
        return self.codec is None or _zstd_stream(self.codec) is not None

    def _removed_if_empty(self, coords: tuple[int, ...], src: np.ndarray) -> bool:
        """Whether chunk ``coords`` is all fill value in an array that does not write empty
        chunks: then its file is removed instead, as zarr does."""
        if self.write_empty or not _all_fill(src, self.fill_value):
            return False
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(self.root, self.key_of(coords)))
        return True

    def _store(
        self, coords: tuple[int, ...], size: int, pieces: Iterable[Any], encoded: bool = False
    ) -> None:
        """Write chunk ``coords``'s ``size`` bytes, given in ``pieces`` (already ``encoded``,
        or compressed here as they come), to a temporary file renamed over the chunk's."""
        path = os.path.join(self.root, self.key_of(coords))
        stream = None if encoded else _zstd_stream(self.codec)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{_WRITER}-{uuid.uuid4().hex[:8]}.partial"
        try:
            with open(partial, "wb") as f:
                if stream is not None:  # compressed straight into the file, piece by piece
                    with stream.stream_writer(f, size=size, closefd=False) as out:
                        for piece in pieces:
                            out.write(piece)
                else:
                    for piece in pieces:
                        f.write(piece)
            os.replace(partial, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(partial)

    def _decode(self, coords: tuple[int, ...], dst: np.ndarray) -> bool:
        """Decode chunk ``coords`` into the contiguous ``dst`` (False when it has no file: a
        fill value).

        A chunk that decodes to another length than ``dst``, or fails to decode
        (truncated, corrupt), is a ``ValueError`` naming the store and the chunk key.
        """
        if self.streams():
            return self._stream(self.key_of(coords), 0, dst, dst.nbytes)
        key = self.key_of(coords)  # a codec that decodes whole chunks only (blosc)
        raw = self._encoded(key)
        if raw is None:
            return False
        problem = _frame_problem(self.codec, raw, dst.nbytes)
        if problem:
            raise self._corrupt(key, problem)
        try:
            self.codec.decode(raw, out=dst)
        except (RuntimeError, ValueError) as e:
            raise self._corrupt(key, f"does not decode ({e})") from e
        return True

    def _encoded(self, key: str) -> memoryview | None:
        """Chunk file ``key`` whole, in this thread's buffer (None: it has no file); a short
        read is an ``OSError``."""
        try:
            with open(os.path.join(self.root, key), "rb", buffering=0) as f:
                size = os.fstat(f.fileno()).st_size
                raw = _scratch(size)
                got = f.readinto(raw)
        except FileNotFoundError:
            return None
        if got != size:
            raise OSError(f"short read of zarr chunk {key!r} in {self.root}: {got} of {size} bytes")
        return raw

    def _corrupt(self, key: str, problem: str) -> ValueError:
        return ValueError(f"zarr chunk {key!r} of the store {self.root} {problem}")


def _frame_problem(codec: Any, raw: memoryview, expected: int) -> str:
    """What the compressed frame's header says is wrong with it ('' when nothing is):
    decoded length other than ``expected``, or (blosc) fewer bytes than the header's."""
    kind = type(codec).__name__
    if kind == "Blosc":
        if len(raw) < 16:
            return f"is truncated: {len(raw)} bytes, shorter than a blosc header"
        nbytes = int.from_bytes(raw[4:8], "little")
        cbytes = int.from_bytes(raw[12:16], "little")
        if cbytes != len(raw):
            return f"is truncated: {len(raw)} bytes where its header says {cbytes}"
        size: int | None = nbytes
    else:
        size = _zstd_content_size(raw) if kind == "Zstd" else None
    if size is not None and size != expected:
        return f"decodes to {size} bytes, expected {expected}"
    return ""


def _zstd_content_size(raw: memoryview) -> int | None:
    """The decoded size a zstd frame header declares (None: not declared, or not zstd)."""
    if len(raw) < 6 or bytes(raw[:4]) != b"\x28\xb5\x2f\xfd":
        return None
    descriptor = raw[4]
    single = (descriptor >> 5) & 1
    pos = 5 + (0 if single else 1) + (0, 1, 2, 4)[descriptor & 3]
    n = (1 if single else 0, 2, 4, 8)[descriptor >> 6]
    if n == 0 or len(raw) < pos + n:
        return None
    value = int.from_bytes(raw[pos : pos + n], "little")
    return value + 256 if n == 2 else value


_HOST = hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()
_WRITER = f"{_HOST}-{os.getpid()}"
_PARTIAL = re.compile(r"\.([0-9a-f]{8})-(\d+)-[0-9a-f]{8}\.partial$")


def sweep_partials(root: str) -> int:
    """Remove the temporary chunk files that killed processes of this host left under ``root``.

    A chunk is written to ``<chunk>.<host>-<pid>-<tag>.partial`` and renamed
    over the chunk; a process killed between the two leaves the partial file.
    Files of live processes, and of other hosts, are left alone. Returns how
    many were removed.
    """
    removed = 0
    for folder, _, names in os.walk(root):
        for name in names:
            m = _PARTIAL.search(name)
            if m is None or m[1] != _HOST or _alive(int(m[2])):
                continue
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(folder, name))
                removed += 1
    return removed


def _alive(pid: int) -> bool:
    """A process ``pid`` runs on this host (one we may not signal still runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def chunk_boxes(where: tuple[slice, ...], chunk_shape: tuple[int, ...]) -> Any:
    """Each chunk of a grid of ``chunk_shape`` under the non-empty region ``where`` (steps 1):
    its coordinates, its part of the array, and that part relative to ``where``."""
    first = [s.start // c for s, c in zip(where, chunk_shape)]
    last = [(s.stop - 1) // c for s, c in zip(where, chunk_shape)]
    for coords in np.ndindex(*(b - a + 1 for a, b in zip(first, last))):
        coords = tuple(a + i for a, i in zip(first, coords))
        box = tuple(
            slice(max(k * c, s.start), min((k + 1) * c, s.stop))
            for k, c, s in zip(coords, chunk_shape, where)
        )
        local = tuple(slice(b.start - s.start, b.stop - s.start) for b, s in zip(box, where))
        yield coords, box, local


def _all_fill(a: np.ndarray, fill: Any) -> bool:
    """Every element equals the fill value (NaN fill: every element NaN)."""
    if fill is None:
        return False
    nan = a.dtype.kind in "fc" and np.isnan(fill)
    if a.size and not (np.isnan(a.flat[0]) if nan else a.flat[0] == fill):
        return False  # most chunks of data differ at once: no pass over them
    return bool(np.isnan(a).all() if nan else (a == fill).all())


_SCRATCH = threading.local()


def _scratch(size: int, slot: str = "raw") -> memoryview:
    """A per-thread buffer of at least ``size`` bytes, reused (no page faults per chunk):
    ``raw`` holds a chunk's encoded bytes, ``copy`` one whole chunk: gathered or padded for
    encoding, or decoded whole when a block needs only part of it."""
    buf = getattr(_SCRATCH, slot, None)
    if buf is None or len(buf) < size:
        buf = bytearray(max(size, 1))
        setattr(_SCRATCH, slot, buf)
    return memoryview(buf)[:size]


def gathered_bytes(block: tuple[int, ...], chunk: tuple[int, ...], itemsize: int) -> int:
    """Bytes :func:`contiguous` takes to gather one chunk out of a C-ordered block of shape
    ``block``: 0 when every chunk is already a slab of it (cut along one axis, the axes before
    it of length 1)."""
    cut = [a for a, (b, c) in enumerate(zip(block, chunk)) if c < b]
    if not cut or (len(cut) == 1 and all(b == 1 for b in block[: cut[0]])):
        return 0
    return math.prod(min(b, c) for b, c in zip(block, chunk)) * itemsize


def contiguous(part: np.ndarray, dtype: Any = None) -> np.ndarray:
    """``part`` as one C-ordered slab of ``dtype`` (its own dtype by default), valid until
    this thread's next call: a part cut across a block's inner axes is gathered into a
    reused per-thread buffer (fresh pages for every chunk cost more than the copy)."""
    dtype = part.dtype if dtype is None else np.dtype(dtype)
    if part.flags.c_contiguous and part.dtype == dtype:
        return part
    flat = np.frombuffer(_scratch(part.size * dtype.itemsize, "copy"), dtype, part.size)
    out = flat.reshape(part.shape)
    np.copyto(out, part, casting="unsafe")
    return out


def _zstd_error() -> type[Exception]:
    """zstandard's error for a frame that does not decode (a class no call raises, where
    the package is missing)."""
    try:
        import zstandard
    except ImportError:
        return type("NoZstdError", (Exception,), {})
    return zstandard.ZstdError


def _zstd_reader() -> Any:
    """This thread's zstd decompressor (None: the ``zstandard`` package missing)."""
    reader = getattr(_SCRATCH, "unzstd", None)
    if reader is None:
        try:
            import zstandard
        except ImportError:
            return None
        reader = _SCRATCH.unzstd = zstandard.ZstdDecompressor()
    return reader


_ZSTD_HEADER = 18
"""The most bytes of a zstd frame header: magic, descriptor, window, dictionary id, size."""


def _zstd_stream(codec: Any) -> Any:
    """A zstd compressor that writes a chunk's frame to its file as it goes, for a numcodecs
    ``Zstd`` codec (None: another codec, or the ``zstandard`` package missing). The frame is
    the one numcodecs writes (content size in the header, the codec's level and checksum),
    without a buffer of the chunk's compressed size: on a 0.66 GiB rechunk, a quarter of
    the pages the process touched."""
    if type(codec).__name__ != "Zstd":
        return None
    key = (int(codec.level), bool(getattr(codec, "checksum", False)))
    cache = getattr(_SCRATCH, "zstd", None)
    if cache is None:
        cache = _SCRATCH.zstd = {}
    if key not in cache:
        try:
            import zstandard
        except ImportError:
            return None
        cache[key] = zstandard.ZstdCompressor(
            level=key[0] or 3, write_checksum=key[1], write_content_size=True
        )
    return cache[key]


def stream_context_bytes(codec: Any, chunk_bytes: int) -> int:
    """Bytes the zstd compressor :func:`_zstd_stream` keeps per thread for chunks of
    ``chunk_bytes``: its tables, its window and two block buffers (3.5 MiB at level 3 for a
    chunk over 2 MiB, as ``ZstdCompressor.memory_size()`` reports after one); 0 for other
    codecs."""
    if type(codec).__name__ != "Zstd":
        return 0
    try:
        import zstandard
    except ImportError:
        return 0
    level = int(codec.level) or 3
    params = zstandard.ZstdCompressionParameters.from_level(level, source_size=max(1, chunk_bytes))
    buffers = (256 << 10) + (4 << 10)  # two 128 KiB blocks, and the stream's own state
    return params.estimated_compression_context_size() + (1 << params.window_log) + buffers


def stream_window_bytes(codec: Any, chunk_bytes: int) -> int:
    """Bytes zstd keeps to decompress a chunk of ``chunk_bytes`` as it reads its file: the
    window the frame was compressed with (from the codec's level and the chunk's size, as
    numcodecs and :func:`_zstd_stream` compress), two blocks and its state (512 KiB)."""
    import zstandard

    level = int(getattr(codec, "level", 0)) or 3
    params = zstandard.ZstdCompressionParameters.from_level(level, source_size=max(1, chunk_bytes))
    return (1 << params.window_log) + (512 << 10)


def chunk_files(array: Any) -> ChunkFiles | None:
    """The chunk files of a zarr array when they can be decoded in place, else None."""
    store = getattr(array, "store", None)
    root = getattr(store, "root", None)
    meta = getattr(array, "metadata", None)
    if root is None or meta is None or type(store).__name__ != "LocalStore":
        return None
    dtype = np.dtype(array.dtype)
    if dtype.kind not in "biufc" or not dtype.isnative:
        return None
    chunk = getattr(array, "chunks", None)
    if not isinstance(chunk, tuple) or len(chunk) != len(array.shape) or not chunk:
        return None
    codec = _v3_codec(meta, dtype) if meta.zarr_format == 3 else _v2_codec(meta)
    if codec is False:
        return None
    config = getattr(array, "config", None)
    return ChunkFiles(
        root=os.path.join(str(root), array.path or ""),
        chunk_shape=tuple(int(c) for c in chunk),
        dtype=dtype,
        key_of=meta.encode_chunk_key,
        codec=codec,
        writable=codec is None or type(codec).__name__ == "Zstd",
        fill_value=_fill(meta.fill_value, dtype),
        write_empty=bool(getattr(config, "write_empty_chunks", False)),
    )


def _fill(value: Any, dtype: np.dtype) -> Any:
    """The fill value as a NumPy scalar of ``dtype`` (None: zarr v2's 'no fill value')."""
    return None if value is None else np.asarray(value, dtype=dtype)[()]


def _v3_codec(meta: Any, dtype: np.dtype) -> Any:
    """numcodecs codec for ``[bytes, compressor?]`` (None: raw); False for other pipelines."""
    names = [type(c).__name__ for c in meta.codecs]
    if not names or names[0] != "BytesCodec" or len(names) > 2:
        return False
    endian = getattr(meta.codecs[0].endian, "value", meta.codecs[0].endian)
    if dtype.itemsize > 1 and endian not in (None, sys.byteorder):
        return False
    if len(names) == 1:
        return None
    return _numcodec(meta.codecs[1])


def _v2_codec(meta: Any) -> Any:
    if getattr(meta, "order", "C") != "C" or getattr(meta, "filters", None):
        return False
    compressor = getattr(meta, "compressor", None)
    if compressor is None:
        return None
    return compressor if type(compressor).__name__ in ("Zstd", "Blosc") else False


def _numcodec(codec: Any) -> Any:
    """The numcodecs twin of a zarr v3 compressor that decodes into a given buffer."""
    import numcodecs

    kind = type(codec).__name__
    if kind == "ZstdCodec":
        return numcodecs.Zstd(level=codec.level, checksum=codec.checksum)
    if kind == "BloscCodec":
        return numcodecs.Blosc()  # decoding reads its parameters from the frame
    return False
