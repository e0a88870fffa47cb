"""Reading what a verifier test records from its `evidence.metric` calls, without running it."""

from __future__ import annotations

import ast
import textwrap

from assay.records.metric_calls import Call, Recorded, read


def reading(source: str) -> Recorded:
    """What the one test function of ``source`` records."""
    (found,) = read(ast.parse(textwrap.dedent(source))).values()
    return found


def names(source: str) -> list[str]:
    found = reading(source)
    assert found.unread == ()
    return sorted(found.names)


def test_a_literal_name_and_unit_are_read_with_where_they_are():
    assert reading(
        """
        def test_x(evidence):
            evidence.metric("gap", 0.1, unit="fraction")
        """
    ).calls == (Call("gap", 3, 5, "fraction", 3, 38),)


def test_an_f_string_over_a_loop_of_a_module_constant_gives_every_name_its_variables_take_together():
    assert reading(
        """
        SIZES = (1, 4)
        def test_x(evidence):
            for n, N in enumerate(SIZES):
                evidence.metric(f"mse_n{N}_{n}", 0.0)
        """
    ).names == {"mse_n1_0", "mse_n4_1"}  # n and N taken together, not crossed


def test_nested_loops_give_every_combination_of_their_variables():
    assert names(
        """
        def test_x(evidence):
            for mode in ("leak", "far"):
                for n in range(2):
                    evidence.metric(f"{mode}_n{n}", 0.0)
        """
    ) == ["far_n0", "far_n1", "leak_n0", "leak_n1"]


def test_a_name_and_a_unit_bound_by_one_loop_stay_paired():
    found = reading(
        """
        def test_x(evidence):
            for name, unit in (("entropy", "nats"), ("mse", "MSE")):
                evidence.metric(name, 0.0, unit=unit)
        """
    )
    assert sorted((c.name, c.unit) for c in found.calls) == [("entropy", "nats"), ("mse", "MSE")]


def test_a_helper_of_the_module_is_followed_with_its_arguments_and_its_calls_keep_their_own_lines():
    found = reading(
        """
        def _summary(evidence, name, per_seed):
            evidence.metric(name, per_seed.mean())
            evidence.metric(name + "_min", per_seed.min())
        def test_x(evidence):
            for key in ("gap", "drop"):
                _summary(evidence, f"{key}_b4", compute(key))
        """
    )
    assert found.unread == ()
    assert sorted((c.name, c.line) for c in found.calls) == [
        ("drop_b4", 3),
        ("drop_b4_min", 4),
        ("gap_b4", 3),
        ("gap_b4_min", 4),
    ]


def test_the_keys_of_a_local_dict_written_with_literal_keys_are_the_names_of_a_loop_over_it():
    assert names(
        """
        def test_x(evidence):
            m = {"probe": probe()}
            for name in ("crop", "colour"):
                m[f"{name}_knn"] = knn(name)
            m.setdefault("chance", 0.1)
            for k, v in m.items():
                evidence.metric(k, v)
        """
    ) == ["chance", "colour_knn", "crop_knn", "probe"]


def test_a_dict_a_function_returns_leaves_the_reading_incomplete_with_the_line_and_why():
    assert reading(
        """
        def test_x(evidence):
            m = measure()
            for k, v in m.items():
                evidence.metric(k, v)
            evidence.metric("chance", 0.5)
        """
    )[:3] == ((Call("chance", 6, 5),), ((5, "the metric name `k` is not one this reading can evaluate"),), (".*",))


def test_a_dict_updated_from_elsewhere_is_not_read():
    assert reading(
        """
        def test_x(evidence):
            m = {"a": 1}
            m.update(more())
            for k, v in m.items():
                evidence.metric(k, v)
        """
    ).unread == ((6, "the metric name `k` is not one this reading can evaluate"),)


def test_a_loop_variable_also_assigned_in_the_body_is_not_read():
    assert reading(
        """
        def test_x(evidence):
            for name in ("a", "b"):
                name = name.upper()
                evidence.metric(name, 0.0)
        """
    ).unread == ((5, "the metric name `name` is not one this reading can evaluate"),)


def test_a_loop_variable_a_nested_loop_binds_again_is_not_read():
    assert reading(
        """
        def test_x(evidence):
            for name in ("a", "b"):
                for name in ("x",):
                    pass
                evidence.metric(name, 0.0)  # "x", twice
        """
    ).unread == ((6, "the metric name `name` is not one this reading can evaluate"),)


def test_a_module_constant_changed_in_place_is_no_constant():
    assert reading(
        """
        SIZES = [1, 2]
        SIZES.append(4)
        def test_x(evidence):
            for n in SIZES:
                evidence.metric(f"n{n}", 0.0)
        """
    ).unread == ((6, "the metric name `f'n{n}'` is not one this reading can evaluate"),)


def test_a_module_list_handed_to_a_function_is_no_constant():
    assert reading(
        """
        SIZES = [1, 2]
        grow(SIZES)
        def test_x(evidence):
            for n in SIZES:
                evidence.metric(f"n{n}", 0.0)
        """
    ).unread == ((6, "the metric name `f'n{n}'` is not one this reading can evaluate"),)


def test_evidence_handed_to_a_function_of_another_module_leaves_the_reading_incomplete():
    assert reading(
        """
        from verify.protocol import run
        def test_x(evidence):
            run(evidence, 3)
        """
    ).unread == ((4, "the evidence is passed to `run`, not a function of this module"),)


def test_evidence_used_in_a_comprehension_stored_or_written_directly_leaves_the_reading_incomplete():
    assert reading(
        """
        def test_x(evidence):
            [evidence.metric(n, 0.0) for n in ("a", "b")]
            ev = evidence
            evidence.metrics["c"] = 1.0
        """
    ).unread == (
        (3, "the evidence is used inside a lambda or a comprehension"),
        (4, "the evidence is passed on or stored"),
        (5, "it reaches `evidence.metrics` other than by calling `evidence.metric(...)`"),
    )


def test_a_unit_that_is_not_a_literal_is_kept_as_unread_without_hiding_the_name():
    assert reading(
        """
        def test_x(evidence):
            evidence.metric("gap", 0.1, unit=UNITS[0])
        """
    )[:2] == ((Call("gap", 3, 5, None, 3, 38, unit_read=False),), ())


def test_a_test_without_the_evidence_fixture_is_not_read():
    assert reading(
        """
        def test_x(device):
            pass
        """
    ) == Recorded((), ((2, "it takes no `evidence` fixture"),), (".*",), frozenset())


def test_a_name_built_at_run_time_keeps_the_parts_it_can_read_so_other_names_are_known_not_to_be_it():
    found = reading(
        """
        def test_x(evidence):
            for tag, v in table().items():
                evidence.metric(f"bias_{tag}", v)
                evidence.metric("se_" + tag, v)
            for n in (16, 4096):
                evidence.metric(f"n{n}_{tag}_err", 0.0)
        """
    )
    assert found.patterns == ("bias_.*", "se_.*", "n(?:16|4096)_.*_err")
    assert found.may_record("bias_n16") and found.may_record("n4096_i2_err")
    assert not found.may_record("critic_rel_err") and not found.may_record("n8_i2_err")
