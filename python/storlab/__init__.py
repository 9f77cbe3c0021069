"""storlab: a storage lab for database engineers.

The library API lives here and in its modules; the `storlab` command is a
thin layer over it (`storlab.cli`). The model itself is Rust
(`storlab._native`)."""

from storlab.api import limits, load_catalog, simulate, tool_info

__version__ = "0.1.0"
__all__ = ["limits", "load_catalog", "simulate", "tool_info", "__version__"]
