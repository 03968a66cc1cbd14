"""The first look: a page's stored histories judged from their bytes, without building
a message, so that only the heads that may need a repair are loaded in full.

`plain` decodes LangGraph's msgpack (and, through `js_look`, LangGraph.js's JSON)
into plain structures and proves a history paired; `token_bound` bounds its tokens
under a budget; `helper` runs the same modules in a second process. They need
nothing but the standard library, ormsgpack and orjson (and the approximation's
constants, `engine.context.approximation`), so the helper loads them from their
files alone. The look only clears: anything it cannot prove goes to the full load.
"""
