"""Type stub for the Rust extension (crates/storlab-py). Results are JSON text."""

__version__: str

def limits_json(scenario_name: str, scenario_text: str, catalog_files: list[tuple[str, str]]) -> str:
    """The limits record of every config of a scenario. Raises ScenarioError or CatalogError."""

def catalog_json(catalog_files: list[tuple[str, str]]) -> str:
    """Every device, host, price and source of the catalog."""

def catalog_entry_json(catalog_files: list[tuple[str, str]], id: str) -> str:
    """One device or host with its prices and sources. Raises ScenarioError for an unknown id."""

def emulate_json(scenario_name: str, scenario_text: str, catalog_files: list[tuple[str, str]], config: str,
                 targets: list[tuple[str | None, str, str]], options_json: str, status: object | None = None) -> str:
    """Serves the emulated pools until a signal reaches Python; the summary with its series. Raises EngineError."""

def emulate_unmount(dir: str) -> bool:
    """Clears an emulated volume mounted at dir; False when nothing was mounted."""
