"""Settings no test may inherit from the developer's shell: the root conftest's
`isolated_settings` and the session fixtures that run before it unset them."""

UNSET_SETTINGS = (
    "SIM_DB",
    "SIM_USER",
    "MONGODB_URI",
    "DB_USER",
    "DB_PASSWORD",
    "DB_CLUSTER_URL",
    "SIM_DB_NAME",
    "DB_NAME",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "OLLAMA_HOST",
    # a parallel test runner sets these for its workers; a test spawning a terminal or reading
    # the width must see the size it asked for, not 80x24
    "COLUMNS",
    "LINES",
)
