"""`rooflab report`: build (the entry point and the index / details pages), pages (one per
family), sections (the family sections with their own tables), tables (what the report says,
as plain text rows, shared by HTML and Markdown), markdown, html (the HTML building blocks)."""
