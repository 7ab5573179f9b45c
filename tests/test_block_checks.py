"""Every block is checked: user functions and readers return the declared shape and a
compatible dtype, or an error names who, which block and both shapes; errors raised by
user code carry the block; corrupt zarr chunks and truncated files name store, chunk and
block (issue 24, row 3)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest
import zarr
from hypothesis import given, settings
from hypothesis import strategies as st
from zarr.codecs import BloscCodec, ZstdCodec

import lazyarr as la

X = np.arange(24.0).reshape(4, 6)


def _notes(e: BaseException) -> str:
    return " ".join(getattr(e, "__notes__", []))


# ------------------------------------------------------------------ user functions


@pytest.mark.parametrize("fn", [lambda b: b[1:], lambda b: np.concatenate([b, b])])
def test_map_overlap_result_must_keep_the_halo_shape(fn) -> None:
    x = la.from_array(np.arange(12.0), chunks=4)
    y = la.map_overlap(fn, x, depth=1, boundary="reflect", dtype="f8")
    with pytest.raises(ValueError, match=r"<lambda>.*block \(\d,\).*where \(6,\) was expected"):
        y.compute()


def _permuted(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Another shape of the same size (reversed, or flattened when that is the same)."""
    other = shape[::-1]
    return other if other != shape else (int(np.prod(shape)),)


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(2, 4), cols=st.integers(3, 5), kind=st.sampled_from(["map", "bw", "gu"]))
def test_user_function_of_right_size_wrong_shape_raises(rows: int, cols: int, kind: str) -> None:
    a = np.arange(rows * cols * 2.0).reshape(rows * 2, cols)
    x = la.from_array(a, chunks=(rows, cols))

    def flipped(b: np.ndarray) -> np.ndarray:
        return b.reshape(_permuted(b.shape))

    if kind == "map":
        y = la.map_blocks(flipped, x, dtype="f8")
    elif kind == "bw":
        y = la.blockwise(flipped, "ij", x, "ij", dtype="f8")
    else:
        y = la.apply_gufunc(flipped, "(j)->(j)", x, output_dtypes="f8")
    want = re.escape(f"flipped: returned a block of shape {_permuted((rows, cols))} for block")
    with pytest.raises(ValueError, match=rf"{want} \(\d, 0\) where \({rows}, {cols}\)"):
        y.compute()


def test_user_function_of_another_kind_of_dtype_raises() -> None:
    x = la.from_array(X, chunks=2)
    with pytest.raises(ValueError, match=r"returned dtype float64 for block \(\d, \d\).*int64"):
        la.map_blocks(lambda b: b / 2, x, dtype="i8").compute()
    y = la.map_blocks(lambda b: b.astype("f4"), x, dtype="f8")  # same kind: cast as declared
    np.testing.assert_array_equal(y.compute(), X)


def test_error_inside_user_function_names_the_block() -> None:
    x = la.from_array(X, chunks=(2, 3))

    def fails_on_last(b: np.ndarray, block_id: tuple[int, ...]) -> np.ndarray:
        if block_id == (1, 1):
            raise ZeroDivisionError("boom")
        return b

    with pytest.raises(ZeroDivisionError, match="boom") as info:
        la.map_blocks(fails_on_last, x, dtype="f8").compute()
    assert "computing block (1, 1) of fails_on_last" in _notes(info.value)
    with pytest.raises(ZeroDivisionError) as info:
        la.map_overlap(fails_on_last, x, depth=1, dtype="f8").compute()
    assert "block (1, 1)" in _notes(info.value)


# ------------------------------------------------------------------ array-like readers


class Reads:
    """An array-like whose ``__getitem__`` returns what ``bend`` makes of the right block."""

    def __init__(self, data: np.ndarray, bend) -> None:
        self.data, self.bend = data, bend
        self.shape, self.dtype = data.shape, data.dtype

    def __getitem__(self, where):
        return self.bend(self.data[where])


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(2, 4), cols=st.integers(3, 5))
def test_reader_of_right_size_wrong_shape_raises(rows: int, cols: int) -> None:
    a = np.arange(rows * cols * 2.0).reshape(rows, cols * 2)
    x = la.from_array(Reads(a, lambda b: b.reshape(_permuted(b.shape))), chunks=(rows, cols))
    want = rf"Reads \({rows}, {cols * 2}\): returned a block of shape .* for block \(0, \d\)"
    with pytest.raises(ValueError, match=rf"{want} where \({rows}, {cols}\) was expected"):
        x.compute()
    good = la.from_array(Reads(a, lambda b: b), chunks=(rows, cols))
    np.testing.assert_array_equal(good[::-1, 1::2].compute(), a[::-1, 1::2])


def test_reader_of_another_kind_of_dtype_raises() -> None:
    r = Reads(np.arange(6), lambda b: b + 0.5)
    with pytest.raises(ValueError, match=r"returned dtype float64 for block \(\d,\) where int64"):
        la.from_array(r, chunks=3).compute()


def test_error_inside_reader_names_source_and_block() -> None:
    def fails(b: np.ndarray) -> np.ndarray:
        raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone") as info:
        la.from_array(Reads(X, fails), chunks=(2, 3)).compute()
    assert "reading block (" in _notes(info.value)
    assert "Reads (4, 6)" in _notes(info.value)


# ------------------------------------------------------------------ files on disk


LAYOUTS = {
    "zstd": {"compressors": ZstdCodec(level=1)},
    "blosc": {"compressors": BloscCodec(cname="lz4")},
    "raw": {"compressors": None},
}


def _zarr(path: Path, data: np.ndarray, chunks: int = 4, **kw) -> zarr.Array:
    z = zarr.create_array(str(path), shape=data.shape, chunks=(chunks,), dtype=data.dtype, **kw)
    z[:] = data
    return z


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_zarr_chunk_decoding_to_too_few_elements_raises(tmp_path: Path, layout: str) -> None:
    kw = LAYOUTS[layout]
    _zarr(tmp_path / "big.zarr", np.arange(12.0), **kw)
    _zarr(tmp_path / "small.zarr", np.arange(2.0), chunks=2, **kw)  # one chunk of 2 elements
    os.replace(tmp_path / "small.zarr" / "c" / "0", tmp_path / "big.zarr" / "c" / "1")
    x = la.from_zarr(str(tmp_path / "big.zarr"), chunks=4)
    with pytest.raises(ValueError, match=r"zarr chunk 'c/1' of the store .*big\.zarr") as info:
        x.compute()
    assert "block (1,)" in _notes(info.value)
    np.testing.assert_array_equal(x[:4].compute(), np.arange(4.0))  # chunk 0 is intact


@pytest.mark.parametrize("layout", ["zstd", "blosc"])
def test_truncated_zarr_chunk_raises_naming_store_chunk_and_block(
    tmp_path: Path, layout: str
) -> None:
    _zarr(tmp_path / "a.zarr", np.random.default_rng(0).random(12), **LAYOUTS[layout])
    chunk = tmp_path / "a.zarr" / "c" / "2"
    data = chunk.read_bytes()
    chunk.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"zarr chunk 'c/2' of the store .*a\.zarr") as info:
        la.from_zarr(str(tmp_path / "a.zarr"), chunks=4).compute()
    assert "block (2,)" in _notes(info.value)


def test_truncated_npy_names_file_and_block(tmp_path: Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(1000.0))
    x = la.from_npy(str(path), chunks=500)
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)
    with pytest.raises(ValueError) as info:
        x.compute()
    assert str(path) in _notes(info.value)
    assert "block (" in _notes(info.value)
