"""``hpcconf sku import``: turn the raw facts collected on a node into a SKU file.

``collect.sh`` (printed by ``hpcconf sku collect-script``) runs on the node with nothing but bash;
:mod:`.collection` reads what it wrote through the parsers in :mod:`hpcconf.parsers`, and
:mod:`.importer` lays the facts out as a SKU file, each value with the file and line it came from.
"""
