"""`fhec stats`: limb-instruction counts from the command line."""

from click.testing import CliRunner

from fhec.cli import main

PROGRAM = '''
import fhec
params = fhec.CKKSParams(N=2**10, levels=2, scale_bits=30, word_bits=32, security=None)
p = fhec.Program("rot", params)
p.output("y", p.input("x").rotate(1))
'''


def test_stats_prints_counts_per_op_and_class(tmp_path):
    f = tmp_path / "prog.py"
    f.write_text(PROGRAM)
    out = CliRunner().invoke(main, ["stats", str(f), "--keyswitch", "bv"])
    assert out.exit_code == 0, out.output
    assert "limb instructions" in out.output and "KSH" in out.output and "key_mult" in out.output
    # BV rotation at L = 3 limbs: 2L AUT + L INTT + L(L−1) NTT + 2L² MUL + 2L(L−1) + L ADD
    assert "│ AUT       │     6 │" in out.output
    assert "│ MUL       │    18 │" in out.output


def test_stats_of_a_missing_file_is_a_clean_error(tmp_path):
    out = CliRunner().invoke(main, ["stats", str(tmp_path / "none.py")])
    assert out.exit_code == 2 and "error: no such file" in out.output and "Traceback" not in out.output


def test_stats_with_a_target_prints_the_lower_bounds(tmp_path):
    f = tmp_path / "prog.py"
    f.write_text(PROGRAM)
    out = CliRunner().invoke(main, ["stats", str(f), "--target", "f1"])
    assert out.exit_code == 0, out.output
    assert "lower bounds on f1" in out.output
    for name in ("compute", "bandwidth", "dependency", "load-aware"):
        assert name in out.output
    assert "(binding)" in out.output


def test_stats_with_an_unknown_target_is_a_clean_error(tmp_path):
    f = tmp_path / "prog.py"
    f.write_text(PROGRAM)
    out = CliRunner().invoke(main, ["stats", str(f), "--target", "nosuch"])
    assert out.exit_code != 0 and "error:" in out.output and "Traceback" not in out.output


def test_stats_with_an_isa_machine_says_the_bounds_are_for_stream_targets(tmp_path):
    f = tmp_path / "prog.py"
    f.write_text(PROGRAM)
    out = CliRunner().invoke(main, ["stats", str(f), "--target", "rpu"])  # was AttributeError: no total_units
    assert out.exit_code == 2 and not isinstance(out.exception, Exception), out.exception
    assert "error: --target rpu: 'rpu' is an ISA machine; the lower bounds are for stream targets" in out.output
