"""The built-in tool registry. Tools are code, so the list lives in code.

A migration writes these rows; skills mention them as @slug.
"""

from catalog.models import Tool

BUILTIN_TOOLS: list[tuple[str, str, str]] = [
    ("http-request", "HTTP request", "Call a host the workspace's egress rules allow."),
    ("send-email", "Send email", "Send an email from the workspace's outgoing address."),
    ("find-file", "Find file", "Find a file in the workspace's document store by name or text."),
    ("query-ledger", "Query ledger", "Read invoices, customers, payments and balances."),
    ("ask-approval", "Ask approval", "Ask a person for a yes or no and wait for the answer."),
    ("read-calendar", "Read calendar", "Read events from the workspace's calendars."),
    ("search-web", "Search the web", "Search the public web and return result snippets."),
    ("create-ticket", "Create ticket", "Open a ticket in the workspace's helpdesk."),
    ("list-devices", "List devices", "List the devices registered to the workspace."),
    ("check-notebook", "Check notebook", "Read the agent's notebook of facts it was told."),
    ("grep-memory", "Search memory", "Search the agent's long-term memory for a phrase."),
]


def ensure_builtin_tools(tool_model=None) -> int:
    """Write any missing built-in tools; returns how many were added."""
    if tool_model is None:  # a migration passes its historical model
        tool_model = Tool
    existing = set(tool_model.objects.values_list("slug", flat=True))
    missing = [
        tool_model(slug=slug, name=name, description=description)
        for slug, name, description in BUILTIN_TOOLS
        if slug not in existing
    ]
    tool_model.objects.bulk_create(missing)
    return len(missing)


def builtin_tools_after_migrate(sender, apps=None, **kwargs):
    """The tool registry is code: after every migrate (and every flush, which ends the
    same way) the database holds a row for each built-in tool."""
    try:
        tool_model = apps.get_model("catalog", "Tool") if apps else None
    except LookupError:
        return  # a migrate of other apps only: the catalog's tables are not there yet
    ensure_builtin_tools(tool_model)
