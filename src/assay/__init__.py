"""Assay: a knowledge base of machine-learning literature claims that can be run.

The engine is laid out by its three flows over a small ground floor; the README's Layout names every module.
"""
