"""Sphinx extension: author–year labels in the reference list.

The text cites author–year (``bibtex_reference_style: author_year``); pybtex's
built-in list styles label entries with numbers or "Kro16". This style labels
them "Krotov and Hopfield 2016", sorted by author, year and title, so the text
and the list use one style.
"""
from __future__ import annotations

import re

from pybtex.plugin import register_plugin
from pybtex.style.formatting.unsrt import Style as UnsrtStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.sorting import BaseSortingStyle


def _surname(person):
    return re.sub(r"[{}\\\"']", "", " ".join(person.prelast_names + person.last_names))


class AuthorYearLabelStyle(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        for entry in sorted_entries:
            names = _names(entry)
            if len(names) > 2:
                who = f"{names[0]} et al."
            else:
                who = " and ".join(names) or entry.fields.get("title", "?")
            yield f"{who} {entry.fields.get('year', 'n.d.')}"


def _names(entry):
    return [_surname(p) for p in entry.persons.get("author", entry.persons.get("editor", []))]


class AuthorYearSortingStyle(BaseSortingStyle):
    """By the label's surnames, then year, then title: the order a reader scans the labels in."""

    def sorting_key(self, entry):
        return (" ".join(_names(entry)).lower(), entry.fields.get("year", ""), entry.fields.get("title", "").lower())


class AuthorYearStyle(UnsrtStyle):
    default_label_style = AuthorYearLabelStyle
    default_sorting_style = AuthorYearSortingStyle


def setup(app):
    register_plugin("pybtex.style.formatting", "author_year_list", AuthorYearStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
