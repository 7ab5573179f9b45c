"""zarr chunk files decoded into and encoded from blocks in place (lazyarr.io.zarr_chunks).

Each layout the direct path takes (zarr v3 raw / zstd / blosc, v2 zstd) is
read and written against zarr itself and NumPy, with edge chunks, chunks
missing from the store (fill values, NaN included), regions cut by chunk
edges, and layouts it must leave to zarr (gzip, big-endian, sharding).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from zarr.codecs import BloscCodec, GzipCodec, ZstdCodec

import lazyarr as la
from lazyarr.io.readers import ArrayLikeReader, ZarrReader, reader_for
from lazyarr.io.zarr_chunks import ChunkFiles, chunk_files
from lazyarr.testing import assert_eq

A = np.arange(50 * 12, dtype=np.float64).reshape(50, 12) / 7 - 20

LAYOUTS = {
    "v3 zstd": {"compressors": ZstdCodec(level=1)},
    "v3 raw": {"compressors": None},
    "v3 blosc": {"compressors": BloscCodec(cname="lz4")},
    "v2 zstd": {"zarr_format": 2},
}


def _array(tmp_path: Path, name: str, data: np.ndarray = A, chunks=(8, 6), **kw) -> zarr.Array:
    z = zarr.create_array(
        str(tmp_path / f"{name.replace(' ', '_')}.zarr"),
        shape=data.shape,
        chunks=chunks,
        dtype=data.dtype,
        **kw,
    )
    z[:] = data
    return z


class Spy:
    """Counts chunks decoded from files and regions handed to zarr."""

    def __init__(self, monkeypatch) -> None:
        self.decoded = self.encoded = self.rows = 0
        decode, store, rows = ChunkFiles._decode, ChunkFiles._store, ChunkFiles._decode_rows
        part, inside = ChunkFiles._decode_part, []

        def counted_decode(files, coords, dst):
            hit = decode(files, coords, dst)
            self.decoded += hit and not inside
            return hit

        def counted_part(files, coords, box, dst):
            inside.append(1)  # a part streamed, or a chunk decoded whole to copy it
            try:
                hit = part(files, coords, box, dst)
            finally:
                inside.pop()
            self.decoded += hit
            return hit

        def counted_rows(files, coords, box, dst):
            hit = rows(files, coords, box, dst)
            self.decoded += hit
            self.rows += hit
            return hit

        def counted_store(files, coords, size, pieces, encoded=False):
            self.encoded += 1  # every chunk file written, whole or an edge chunk padded
            store(files, coords, size, pieces, encoded)

        monkeypatch.setattr(ChunkFiles, "_decode", counted_decode)
        monkeypatch.setattr(ChunkFiles, "_decode_part", counted_part)
        monkeypatch.setattr(ChunkFiles, "_store", counted_store)
        monkeypatch.setattr(ChunkFiles, "_decode_rows", counted_rows)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_reads_whole_chunks_from_their_files(tmp_path, monkeypatch, layout):
    z = _array(tmp_path, layout, **LAYOUTS[layout])
    reader = reader_for(z)
    assert isinstance(reader, ZarrReader)
    spy = Spy(monkeypatch)
    # rows 8..40, columns 6..12: four whole chunks, each one slab of the (32, 6) block
    np.testing.assert_array_equal(reader.read((slice(8, 40), slice(6, 12))), A[8:40, 6:12])
    assert spy.decoded == 4
    # chunks cut by the region (rows 3..8) or the array's edge (48..50) along the first
    # axis alone: only their rows are decoded, into the block; zarr reads none
    np.testing.assert_array_equal(reader.read((slice(3, 50), slice(6, 12))), A[3:50, 6:])
    assert spy.decoded == 4 + 7
    assert spy.rows == (2 if "blosc" not in layout else 0)
    # two chunks wide: no chunk is one slab of the block, each is decoded then copied
    np.testing.assert_array_equal(reader.read((slice(0, 50), slice(0, 12))), A)
    assert spy.decoded == 4 + 7 + 14
    np.testing.assert_array_equal(reader.read((slice(5, 19), slice(1, 4))), A[5:19, 1:4])
    assert spy.decoded == 4 + 7 + 14 + 3  # rows 0..8, 8..16, 16..24 of one column
    np.testing.assert_array_equal(reader.read((slice(0, 50, 3), slice(0, 12))), A[::3])


def test_missing_chunks_are_fill_values(tmp_path):
    data = np.full((16, 6), np.nan)
    data[8:] = 1.5
    z = zarr.create_array(
        str(tmp_path / "f.zarr"), shape=data.shape, chunks=(8, 6), dtype="f8", fill_value=np.nan
    )
    z[:] = data  # the all-NaN chunk is not written
    assert not os.path.exists(tmp_path / "f.zarr" / "c" / "0" / "0")
    out = reader_for(z).read((slice(0, 16), slice(0, 6)))
    np.testing.assert_array_equal(out, data)
    part = reader_for(z).read((slice(5, 12), slice(1, 4)))  # parts of a missing chunk too
    np.testing.assert_array_equal(part, data[5:12, 1:4])


def test_layouts_left_to_zarr(tmp_path):
    gz = _array(tmp_path, "gzip", compressors=GzipCodec())
    assert chunk_files(gz) is None
    big = _array(tmp_path, "big", data=A.astype(">f8"))
    assert chunk_files(big) is None or big.dtype.isnative
    sharded = _array(tmp_path, "sharded", chunks=(4, 6), shards=(8, 6))
    assert chunk_files(sharded) is None
    for z in (gz, big, sharded):
        reader = reader_for(z)
        assert not isinstance(reader, ZarrReader) or reader.dtype.isnative
        np.testing.assert_array_equal(reader.read((slice(0, 50), slice(0, 12))), A)
    mem = zarr.create_array(zarr.storage.MemoryStore(), shape=(4,), chunks=(2,), dtype="i8")
    assert type(reader_for(mem)) is ArrayLikeReader


@pytest.mark.parametrize("layout", ["v3 zstd", "v3 raw", "v2 zstd"])
@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_writes_whole_chunks_to_their_files(tmp_path, monkeypatch, layout, executor):
    target = _array(tmp_path, layout, data=np.zeros_like(A), **LAYOUTS[layout])
    spy = Spy(monkeypatch)
    la.store(la.asarray(A, chunks=(16, 6)) * 2, target, executor=executor)
    np.testing.assert_array_equal(target[:], A * 2)
    # rows 0..48 are whole chunks; 48..50, the array's edge, is padded to a whole chunk
    assert spy.encoded == 7 * 2
    assert not list(Path(target.store.root).rglob("*.partial"))


@pytest.mark.parametrize("layout", ["v3 zstd", "v3 raw", "v2 zstd"])
@pytest.mark.parametrize("fill", [0.0, -1.5, np.nan])
def test_edge_chunks_written_from_blocks_read_back_as_zarr_writes_them(tmp_path, layout, fill):
    """An edge chunk (rows 48..50 of 8-row chunks, columns 6..9 of 3-column ones) is stored
    padded to a whole chunk, the rest the fill value: zarr reads it back, and its file is
    as large as the one zarr itself writes for the same data."""
    data = np.arange(50 * 9, dtype=np.float64).reshape(50, 9) / 3
    kw = {**LAYOUTS[layout], "fill_value": fill, "chunks": (8, 3)}
    ours = _array(tmp_path, "ours " + layout, data=np.zeros_like(data), **kw)
    theirs = _array(tmp_path, "theirs " + layout, data=data, **kw)
    spy_files = chunk_files(ours)
    assert spy_files is not None
    la.store(la.asarray(data, chunks=(16, 9)), ours, executor="numpy")
    np.testing.assert_array_equal(zarr.open_array(ours.store.root)[:], data)
    key = ours.metadata.encode_chunk_key((6, 2))  # rows 48..50, columns 6..9: the corner
    mine, zarrs = Path(ours.store.root) / key, Path(theirs.store.root) / key
    if layout == "v3 raw":
        assert mine.read_bytes() == zarrs.read_bytes()
    else:
        assert abs(mine.stat().st_size - zarrs.stat().st_size) <= 16
    got = np.empty((2, 3))
    spy_files.read_into(ours, (slice(48, 50), slice(6, 9)), got)
    np.testing.assert_array_equal(got, data[48:, 6:])


@pytest.mark.parametrize("write_empty", [False, True])
def test_chunks_of_fill_value_are_removed_unless_empty_chunks_are_written(tmp_path, write_empty):
    z = zarr.create_array(
        str(tmp_path / "e.zarr"),
        shape=(16, 4),
        chunks=(8, 4),
        dtype="f8",
        fill_value=0.0,
        config={"write_empty_chunks": write_empty},
    )
    z[:] = 5.0
    data = np.zeros((16, 4))
    data[8:] = 3.0
    la.store(la.asarray(data, chunks=(8, 4)), z)
    assert os.path.exists(tmp_path / "e.zarr" / "c" / "0" / "0") == write_empty
    np.testing.assert_array_equal(zarr.open_array(str(tmp_path / "e.zarr"))[:], data)


@pytest.mark.parametrize("executor", ["numpy", "numba"])
def test_round_trip_through_files_on_every_local_executor(tmp_path, monkeypatch, executor):
    _array(tmp_path, "src", chunks=(8, 6), compressors=ZstdCodec(level=1))
    x = la.from_zarr(str(tmp_path / "src.zarr"), chunks=(16, 6))
    spy = Spy(monkeypatch)
    out = la.to_zarr((x - x.mean(0)) / x.std(0), str(tmp_path / "out.zarr"), executor=executor)
    expect = (A - A.mean(0)) / A.std(0)
    np.testing.assert_allclose(out[:], expect, rtol=1e-12, atol=1e-12)
    # each output chunk is one block; the two of rows 48..50 are padded edge chunks
    assert spy.decoded >= 12 and spy.encoded == 8
    assert_eq(la.from_zarr(str(tmp_path / "out.zarr")), expect)


def test_readers_and_writers_pickle_with_their_files(tmp_path):
    z = _array(tmp_path, "p", compressors=ZstdCodec(level=1))
    reader = pickle.loads(pickle.dumps(reader_for(z)))
    assert isinstance(reader, ZarrReader) and reader.token == reader_for(z).token
    np.testing.assert_array_equal(reader.read((slice(8, 16), slice(0, 6))), A[8:16, :6])


@pytest.mark.parametrize("level", [0, 1, 3, 9])
@pytest.mark.parametrize("chunk_bytes", [64 << 10, 1 << 20, 10 << 20])
def test_the_compressor_kept_per_thread_is_counted_at_least_as_it_grows(level, chunk_bytes):
    """The memory estimate counts each thread's zstd compressor (``buffer_bytes``): never
    less than the compressor reports after streaming a chunk of that size into a file."""
    import io

    import numcodecs
    import zstandard

    from lazyarr.io import zarr_chunks

    codec = numcodecs.Zstd(level=level)
    predicted = zarr_chunks.stream_context_bytes(codec, chunk_bytes)
    # a fresh compressor as _zstd_stream makes (a thread's cached one keeps the largest
    # context it ever needed, from chunks written before)
    stream = zstandard.ZstdCompressor(level=level or 3, write_content_size=True)
    data = np.random.default_rng(level).random(chunk_bytes // 8)
    with stream.stream_writer(io.BytesIO(), size=data.nbytes, closefd=False) as out:
        out.write(memoryview(data).cast("B"))
    assert stream.memory_size() <= predicted < 2 * stream.memory_size() + (1 << 20)
    assert zarr_chunks.stream_context_bytes(numcodecs.GZip(), chunk_bytes) == 0


def test_a_zarr_write_counts_its_compressor_in_the_estimate(tmp_path):
    """A write into a zstd store keeps one compressor per thread: the plan's predicted peak
    grows by that much over a write of raw chunks."""
    from lazyarr import api

    x = la.random.random((256, 256), chunks=(64, 256), seed=1)
    peaks = {}
    for name, compressors in (("zstd", ZstdCodec(level=3)), ("raw", None)):
        target = zarr.create_array(
            str(tmp_path / f"{name}.zarr"),
            shape=x.shape,
            dtype=x.dtype,
            chunks=(64, 256),
            compressors=compressors,
        )
        planned = la.store(x, target, compute=False)
        plan = api.make_plan([planned._expr], "numba", api.passes_for(None, None))
        peaks[name] = api.memory_estimate(plan, api.pass_context("numba", False)).peak
    assert peaks["zstd"] - peaks["raw"] >= 1 << 20


ROWS_LAYOUTS = {
    "zstd": {"compressors": ZstdCodec(level=1)},
    "zstd checksum": {"compressors": ZstdCodec(level=3, checksum=True)},
    "raw": {"compressors": None},
}


@pytest.mark.parametrize("layout", ROWS_LAYOUTS)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_rows_of_a_chunk_decode_alone_into_the_block(tmp_path_factory, layout, data):
    """A region cut along the first axis only (any rows, the last chunk short) decodes just
    those rows of each chunk, straight into the block; values equal NumPy's."""
    rows = data.draw(st.integers(1, 40), label="rows")
    chunk = data.draw(st.integers(1, 12), label="chunk rows")
    a = np.random.default_rng(rows * 13 + chunk).standard_normal((rows, 3, 5))
    z = _array(tmp_path_factory.mktemp("rows"), layout, a, (chunk, 3, 5), **ROWS_LAYOUTS[layout])
    start = data.draw(st.integers(0, rows - 1), label="start")
    stop = data.draw(st.integers(start + 1, rows), label="stop")
    reader = reader_for(z)
    assert isinstance(reader, ZarrReader) and reader.files.streams()
    np.testing.assert_array_equal(
        reader.read((slice(start, stop), slice(0, 3), slice(0, 5))), a[start:stop]
    )


@pytest.mark.parametrize("layout", ["zstd", "raw"])
@pytest.mark.parametrize(
    "region",
    [(slice(8, 10), slice(0, 4)), (slice(9, 10), slice(1, 3))],
    ids=["rows", "part"],  # the short last chunk's 2 rows; part of one row
)
def test_a_truncated_chunk_read_in_part_names_the_chunk(tmp_path, layout, region):
    a = np.random.default_rng(3).random((10, 4))
    z = _array(tmp_path, layout, a, (4, 4), **ROWS_LAYOUTS[layout])
    path = Path(z.store.root) / "c" / "2" / "0"
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(ValueError, match=r"zarr chunk 'c/2/0' of the store"):
        reader_for(z).read(region)


def _chunk_bytes(path: Path, layout: str) -> bytes:
    """A chunk file's decoded bytes (zstd or raw)."""
    raw = path.read_bytes()
    if "zstd" not in layout:
        return raw
    import zstandard

    return zstandard.ZstdDecompressor().decompress(raw)


@pytest.mark.parametrize("layout", ["v3 zstd", "v3 raw", "v2 zstd"])
@pytest.mark.parametrize("piece", [1 << 20, 24], ids=["slabs", "rows"])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_edge_chunks_stream_the_bytes_zarr_stores(tmp_path_factory, layout, piece, data):
    """Chunks of 1-3-d arrays written piece by piece (``chunk_pieces``: edge chunks padded,
    chunks cut across a block's inner axes gathered; tiny pieces step over more axes)
    decode to the bytes zarr itself stores."""
    from lazyarr.io import chunk_pieces

    with pytest.MonkeyPatch.context() as m:
        m.setattr(chunk_pieces, "PIECE_BYTES", piece)
        _edges_as_zarr_stores(tmp_path_factory, layout, data)


def _edges_as_zarr_stores(tmp_path_factory, layout, data):
    ndim = data.draw(st.integers(1, 3), label="ndim")
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(data.draw(st.integers(1, n + 2)) for n in shape)
    fill = data.draw(st.sampled_from([0.0, -1.5, np.nan]), label="fill")
    blocks = tuple(c * data.draw(st.integers(1, 3), label="chunks a block") for c in chunks)
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    where = tmp_path_factory.mktemp("edges")
    kw = {**LAYOUTS[layout], "fill_value": fill, "chunks": chunks}
    ours = _array(where, "ours", data=np.zeros_like(a), **kw)
    theirs = _array(where, "theirs", data=a, **kw)
    la.store(la.asarray(a, chunks=blocks), ours, executor="numpy")
    np.testing.assert_array_equal(zarr.open_array(ours.store.root)[:], a)
    for coords in np.ndindex(*(-(-n // c) for n, c in zip(shape, chunks))):
        key = ours.metadata.encode_chunk_key(coords)
        mine, zarrs = Path(ours.store.root) / key, Path(theirs.store.root) / key
        assert _chunk_bytes(mine, layout) == _chunk_bytes(zarrs, layout), coords


def test_an_edge_chunk_of_too_many_slabs_is_padded_whole(tmp_path, monkeypatch):
    from lazyarr.io import chunk_pieces

    monkeypatch.setattr(chunk_pieces, "MAX_PIECES", 1)
    monkeypatch.setattr(chunk_pieces, "PIECE_BYTES", 8)
    data = np.arange(50 * 9, dtype=np.float64).reshape(50, 9) / 3
    z = _array(tmp_path, "z", data=np.zeros_like(data), chunks=(8, 4))
    assert chunk_pieces.padded_pieces(data[48:, 8:], (8, 4), 0.0) is None
    la.store(la.asarray(data, chunks=(8, 4)), z, executor="numpy")
    np.testing.assert_array_equal(zarr.open_array(z.store.root)[:], data)


def test_a_write_with_edge_chunks_keeps_slabs_not_a_padded_chunk(tmp_path):
    """A pencil write: (4380, 48, 48) float32 chunks (38.5 MiB) over 721 rows leave an edge
    chunk in every column. A thread padded each in a whole chunk, kept for the next one; it
    now keeps two pieces of at most 1 MiB."""
    from lazyarr.io.chunk_pieces import padding_bytes
    from lazyarr.io.writers import writer_for

    z = zarr.create_array(
        str(tmp_path / "p.zarr"), shape=(4380, 721, 96), chunks=(4380, 48, 48), dtype="float32"
    )
    kept = writer_for(z).buffer_bytes((4380, 48, 48))
    chunk = 4380 * 48 * 48 * 4
    assert kept < chunk // 4  # the compressor (3.5 MiB) and two pieces of 1 MiB
    raw = zarr.create_array(
        str(tmp_path / "r.zarr"),
        shape=(4380, 721, 96),
        chunks=(4380, 48, 48),
        dtype="float32",
        compressors=None,
    )
    pieces = writer_for(raw).buffer_bytes((4380, 48, 48))
    assert pieces == padding_bytes((4380, 48, 48), 4) <= 2 << 20


@pytest.mark.parametrize("layout", ["v3 zstd", "v3 raw", "v2 zstd"])
def test_whole_chunks_decode_from_their_files_without_an_encoded_copy(tmp_path, layout):
    """A chunk read whole streams from its file into the block: the thread keeps no buffer
    of its encoded bytes (before: one of the largest chunk, 95 MiB a thread for ERA5's),
    and the estimate counts zstd's window alone. Blosc does not stream: it keeps one."""
    import threading

    from lazyarr.io import zarr_chunks

    a = np.random.default_rng(4).random((64, 32, 16))
    z = _array(tmp_path, layout, a, (16, 32, 16), **LAYOUTS[layout])
    reader = reader_for(z)
    assert isinstance(reader, ZarrReader)
    kept = {}

    def read() -> None:
        kept["values"] = reader.read((slice(0, 64), slice(0, 32), slice(0, 16)))
        kept["raw"] = getattr(zarr_chunks._SCRATCH, "raw", None)

    t = threading.Thread(target=read)
    t.start()
    t.join()
    np.testing.assert_array_equal(kept["values"], a)
    assert kept["raw"] is None
    chunk = 16 * 32 * 16 * 8
    counted = reader.files.read_buffer_bytes(cuts=False)
    assert counted == (
        0 if layout == "v3 raw" else zarr_chunks.stream_window_bytes(reader.files.codec, chunk)
    )
    assert counted < chunk or layout != "v3 raw"
    blosc = _array(tmp_path, "blosc", a, (16, 32, 16), **LAYOUTS["v3 blosc"])
    assert reader_for(blosc).files.read_buffer_bytes(cuts=True) == 2 * chunk


def test_a_corrupt_checksummed_chunk_read_whole_names_the_chunk(tmp_path):
    a = np.random.default_rng(5).random((16, 8))
    z = _array(tmp_path, "c", a, (8, 8), compressors=ZstdCodec(level=3, checksum=True))
    path = Path(z.store.root) / "c" / "1" / "0"
    raw = bytearray(path.read_bytes())
    raw[-2] ^= 0xFF  # the checksum at the frame's end: the data decodes, the check fails
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"zarr chunk 'c/1/0' of the store"):
        reader_for(z).read((slice(0, 16), slice(0, 8)))
    np.testing.assert_array_equal(reader_for(z).read((slice(0, 8), slice(0, 8))), a[:8])


@pytest.mark.parametrize("layout", ROWS_LAYOUTS)
@pytest.mark.parametrize("piece", [1 << 20, 24], ids=["pieces", "tiny pieces"])
@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_parts_of_chunks_stream_piece_by_piece(tmp_path_factory, layout, piece, data):
    """Any region of a 1-3-d store (chunks cut on every axis, edge chunks) reads as NumPy
    slices it, each chunk's part copied out of pieces as the file streams (tiny pieces
    seek over rows and step over more axes)."""
    from lazyarr.io import chunk_pieces

    ndim = data.draw(st.integers(1, 3), label="ndim")
    shape = tuple(data.draw(st.lists(st.integers(1, 9), min_size=ndim, max_size=ndim)))
    chunks = tuple(data.draw(st.integers(1, n + 1)) for n in shape)
    region = []
    for n in shape:
        start = data.draw(st.integers(0, n - 1))
        region.append(slice(start, data.draw(st.integers(start + 1, n))))
    a = np.random.default_rng(sum(shape) + len(region)).standard_normal(shape)
    z = _array(tmp_path_factory.mktemp("parts"), layout, a, chunks, **ROWS_LAYOUTS[layout])
    with pytest.MonkeyPatch.context() as m:
        m.setattr(chunk_pieces, "PIECE_BYTES", piece)
        got = reader_for(z).read(tuple(region))
    np.testing.assert_array_equal(got, a[tuple(region)])
