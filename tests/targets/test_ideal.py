"""The ideal target: spec parsing, parameters, its port model and its cost model."""

from __future__ import annotations

import pytest

from phalanx.compiler.schedule import Transfer
from phalanx.compiler.target import resolve
from phalanx.grammar.diagnostics import UsageError
from phalanx.runtime.engine import Engine


def test_spec_with_overrides():
    t = resolve("ideal:32,alpha_us=20,beta_us_per_byte=0.5")
    assert t.nnodes == 32 and t.params.alpha_us == 20 and t.params.beta_us_per_byte == 0.5
    assert resolve("ideal").nnodes == 16


@pytest.mark.parametrize("spec, message", [
    ("ideal:0", "bad node count '0' for target 'ideal'"),
    ("ideal:x4", "bad node count 'x4' for target 'ideal'"),
    ("ideal:4,alpha_us=fast", "parameter alpha_us='fast' of target 'ideal' is not a number"),
    ("ideal:4,alpha_us=-1", "parameter alpha_us=-1 of target 'ideal' must be a finite number >= 0"),
    ("ideal:4,8", "target spec 'ideal:4,8' has two sizes"),
    ("warp:4", "unknown target 'warp' in spec 'warp:4'"),
])
def test_bad_specs(spec, message):
    with pytest.raises(UsageError) as info:
        resolve(spec)
    assert message in info.value.diagnostic.message
    assert info.value.exit_code == 2


def finish_times(transfers, spec="ideal:4,alpha_us=10,beta_us_per_byte=0.01"):
    engine = Engine()
    network = resolve(spec).build_network(engine)
    done = {}

    def send(t):
        yield from network.transfer(t)
        done[(t.src, t.dst)] = engine.now

    for t in transfers:
        engine.process(send(t), f"{t.src}->{t.dst}")
    engine.run()
    return done


def test_one_message_takes_alpha_plus_beta_m():
    assert finish_times([Transfer(0, 1, 1000, 0, 1)])[(0, 1)] == pytest.approx(20e-6)


def test_two_messages_into_one_port_serialise_their_wire_time():
    done = finish_times([Transfer(0, 2, 1000, 0, 2), Transfer(1, 2, 1000, 1, 2)])
    assert done[(0, 2)] == pytest.approx(20e-6)
    assert done[(1, 2)] == pytest.approx(30e-6)  # waited beta*m for the receive port


def test_two_messages_from_one_port_serialise_entirely():
    done = finish_times([Transfer(0, 1, 1000, 0, 1), Transfer(0, 2, 1000, 0, 2)])
    assert sorted(done.values()) == pytest.approx([20e-6, 40e-6])


def test_lower_bound_and_prediction(examples):
    from conftest import compile_text

    compiled = compile_text((examples / "transpose.phx").read_text())
    c, t = compiled.collectives[0], compiled.target
    assert t.predict_time_s(c, "direct") == pytest.approx(15 * (10e-6 + 0.01e-6 * 2048))
    # each node's 15 blocks: 15 start-ups, or a block sent twice for each start-up saved
    # (docs/bounds.md "Start-ups or relays"); `direct` meets it
    assert t.binding_bound(c) == (pytest.approx(15 * (10e-6 + 0.01e-6 * 2048)), "start-ups or relays")


def test_a_negative_parameter_says_what_to_write():
    with pytest.raises(UsageError) as info:
        resolve("ideal:4,alpha_us=-1")
    assert info.value.diagnostic.hint == ("give alpha_us a value of 0 or more, or leave it out "
                                          "for the seed's value")
