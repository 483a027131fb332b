"""File types for Grep's ``type`` filter when ripgrep is not there.

The globs are copied from ``rg --type-list`` (ripgrep 14.1) for the common types, so
both engines mean the same thing by ``type: "py"``; a test checks them against the
binary. A type ripgrep knows but this table does not gives a clear error.
"""

from __future__ import annotations

__all__ = ["FILE_TYPES", "type_globs"]

FILE_TYPES: dict[str, tuple[str, ...]] = {
    "c": ("*.[chH]", "*.[chH].in", "*.cats"),
    "cpp": ("*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in",
            "*.hh", "*.hh.in", "*.inl"),
    "cs": ("*.cs",),
    "css": ("*.css", "*.scss"),
    "csv": ("*.csv",),
    "dart": ("*.dart",),
    "diff": ("*.diff", "*.patch"),
    "docker": ("*Dockerfile*",),
    "go": ("*.go",),
    "h": ("*.h", "*.hh", "*.hpp"),
    "html": ("*.ejs", "*.htm", "*.html"),
    "java": ("*.java", "*.jsp", "*.jspx", "*.properties"),
    "js": ("*.cjs", "*.js", "*.jsx", "*.mjs", "*.vue"),
    "json": ("*.json", "*.sarif", "composer.lock"),
    "jsonl": ("*.jsonl",),
    "jupyter": ("*.ipynb", "*.jpynb"),
    "kotlin": ("*.kt", "*.kts"),
    "log": ("*.log",),
    "lua": ("*.lua",),
    "make": ("*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in",
             "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"),
    "markdown": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "md": ("*.markdown", "*.md", "*.mdown", "*.mdwn", "*.mdx", "*.mkd", "*.mkdn"),
    "php": ("*.php", "*.php3", "*.php4", "*.php5", "*.php7", "*.php8", "*.pht", "*.phtml"),
    "py": ("*.py", "*.pyi"),
    "python": ("*.py", "*.pyi"),
    "rst": ("*.rst",),
    "ruby": ("*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"),
    "rust": ("*.rs",),
    "scala": ("*.sbt", "*.scala"),
    "sql": ("*.psql", "*.sql"),
    "swift": ("*.swift",),
    "toml": ("*.toml", "Cargo.lock"),
    "ts": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "typescript": ("*.cts", "*.mts", "*.ts", "*.tsx"),
    "txt": ("*.txt",),
    "vue": ("*.vue",),
    "xml": ("*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"),
    "yaml": ("*.yaml", "*.yml"),
    "zig": ("*.zig",),
}


def type_globs(name: str) -> tuple[str, ...]:
    """The globs of a file type; ValueError naming the type when it is unknown."""
    try:
        return FILE_TYPES[name]
    except KeyError:
        known = ", ".join(sorted(FILE_TYPES))
        raise ValueError(f"unrecognized file type: {name!r} (without ripgrep the known types are: {known})") from None
