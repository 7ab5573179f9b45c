"""``python -m lazyarr``: the same command line as ``lazyarr`` (see lazyarr/cli.py)."""

from lazyarr.cli import main

raise SystemExit(main())
