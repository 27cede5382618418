#!/usr/bin/python3
"""Prints `FILE:LINE: enum value SCOPE::ENUM::VALUE is not documented` for
each value of a public enum without a comment in doxygen's XML output, once
each, and exits 1 when there is one. Doxygen 1.9.4 warns about undocumented classes,
functions, variables and enums, but not about their values.

    undocumented_enum_values.py XML_DIR
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def text(element):
    return "".join(element.itertext()).strip() if element is not None else ""


found = set()
for xml in sorted(Path(sys.argv[1]).glob("*.xml")):
    if xml.name == "index.xml":
        continue
    compound = ET.parse(xml).getroot().find("compounddef")
    if compound is None or compound.get("kind") == "file":
        continue  # an enum is listed again in its file's page
    scope = text(compound.find("compoundname"))
    for enum in compound.iter("memberdef"):
        if enum.get("kind") != "enum" or enum.get("prot") != "public":
            continue
        where = enum.find("location")
        for value in enum.findall("enumvalue"):
            if text(value.find("briefdescription")) or text(value.find("detaileddescription")):
                continue
            found.add((where.get("file"), int(where.get("line")),
                       f"{scope}::{text(enum.find('name'))}::{text(value.find('name'))}"))
for file, line, name in sorted(found):
    print(f"{file}:{line}: enum value {name} is not documented")
sys.exit(1 if found else 0)
