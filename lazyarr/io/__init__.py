"""Stored arrays: readers (and writers) of zarr, HDF5 and .npy, run inside executors."""
