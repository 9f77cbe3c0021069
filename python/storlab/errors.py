"""storlab's one error hierarchy. The CLI prints any StorlabError as one line
(`error: <what> — <how to fix>`) and exits 1; the binding maps the Rust
model's errors onto these classes."""


class StorlabError(Exception):
    """Anything a user can fix: bad input, a missing file, a refused path."""


class ScenarioError(StorlabError):
    """A scenario file that cannot be read or does not describe a valid deployment."""


class SuspectProfileError(ScenarioError):
    """A database profile its health check finds suspect (a sweep that dips
    beyond its noise, a penalty at its fit's bound, too short a window): the
    message holds one line per reason, each with its fix."""


class CatalogError(StorlabError):
    """A catalog file that cannot be read or breaks the catalog schema."""


class EngineError(StorlabError):
    """An engine (simulator, real I/O) that cannot run the job."""


class DatabaseError(StorlabError):
    """A database that cannot be reached, started or driven."""


class DatabaseGone(DatabaseError):
    """The database went away during a timed run: its server died, or the
    volume under its data directory did. `record` is the run record of what
    was measured before (marked interrupted), or None."""

    def __init__(self, message: str, record: dict | None = None):
        super().__init__(message)
        self.record = record


class InternalError(StorlabError):
    """A bug in storlab (a Rust panic caught where work crosses into Rust):
    printed as one line asking for a report, exit 70 — never the user's fault."""
