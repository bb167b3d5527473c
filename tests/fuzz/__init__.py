"""Differential fuzzer: random NumPy programs, compiled with hcompile, checked against NumPy.

    python -m tests.fuzz --programs 100000 --seed S --jobs N --out DIR

gen.py generates programs (expression DAGs emitted as Python source), values.py their inputs,
model.py bounds how far a correct compiled result may be from NumPy's (the tolerance table),
compare.py compares, runner.py runs and shrinks one program, driver.py runs many in worker
processes. tests/README.md describes the options and the output.
"""
