"""A sixth profile, shipped by a package of its own: notes, one a line (`topic: text`), searched
by topic. Its folder holds what a profile is: this declaration, its contract, its pipeline, its
tools and its commands; the package's entry points make scoperag find it."""

from scoperag.server.profiles.declaration import DeleteTarget, Profile, Sample, SearchTool

PROFILE = Profile(
    name="notes",
    order=60,
    instructions="Search notes by topic.",
    tools="notes_profile.tools",
    commands="notes_profile.commands",
    methods={"search": "search_notes", "ingest": "ingest_notes"},
    retriever=SearchTool("search", "limit"),
    sample=Sample(__file__.replace("__init__.py", "sample.txt"), "scoperag ingest notes {path}"),
    groups={"topics": "topic"},
    deletes={"note-topic": DeleteTarget("topic", "notes on topic")},
)
