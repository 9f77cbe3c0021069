"""Type stub for the Rust extension (crates/storlab-py). Results are JSON text."""

__version__: str

def limits_json(scenario_name: str, scenario_text: str, catalog_files: list[tuple[str, str]]) -> str:
    """The limits record of every config of a scenario. Raises ScenarioError or CatalogError."""

def catalog_json(catalog_files: list[tuple[str, str]]) -> str:
    """Every device, host, price and source of the catalog."""

def catalog_entry_json(catalog_files: list[tuple[str, str]], id: str) -> str:
    """One device or host with its prices and sources. Raises ScenarioError for an unknown id."""
