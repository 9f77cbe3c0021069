"""storlab's one error hierarchy. The CLI prints any StorlabError as one line
(`error: <what> — <how to fix>`) and exits 1; the binding maps the Rust
model's errors onto these classes."""


class StorlabError(Exception):
    """Anything a user can fix: bad input, a missing file, a refused path."""


class ScenarioError(StorlabError):
    """A scenario file that cannot be read or does not describe a valid deployment."""


class CatalogError(StorlabError):
    """A catalog file that cannot be read or breaks the catalog schema."""


class EngineError(StorlabError):
    """An engine (simulator, real I/O) that cannot run the job."""


class DatabaseError(StorlabError):
    """A database that cannot be reached, started or driven."""


class InternalError(StorlabError):
    """A bug in storlab (a Rust panic caught where work crosses into Rust):
    printed as one line asking for a report, exit 70 — never the user's fault."""
