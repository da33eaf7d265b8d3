"""PSRO's league coordinator: the cycle of snapshots, evaluation tasks, solves and budgets."""

import json

import numpy as np
import pytest

from msagent.psro.coordinator import TASK_TIMEOUT_S, PSROCoordinator, PSROSettings


class Clock:
    """A settable clock."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def coordinator(**kw):
    settings = PSROSettings(**{"episodes_per_br": 10, "games_per_entry": 4, "iterations": 3,
                               **kw})
    clock = Clock()
    return PSROCoordinator(settings, 2, clock), clock


def play_all(c, payoff=lambda seats: [0.0, 0.0]):
    """Report every queued task with ``payoff`` (exact)."""
    while (task := c.next_task()) is not None:
        assert c.report(task.task, [payoff(task.seats)], exact=True)


def test_the_cycle_snapshot_tasks_solve_budget():
    c, _ = coordinator()
    assert c.distribution() == {} and not c.br_due("br")
    c.on_snapshot("br", "br:1")
    task = c.next_task()
    assert task.seats == ("br:1", "br:1") and task.games == 4 and c.next_task() is None
    assert c.report(task.task, [[0.5, -0.5]], exact=True)
    assert c.distribution() == {"br:1": 1.0} and c.state.iteration == 0
    c.count_episode("br", 9)
    assert not c.br_due("br")
    c.count_episode("br", )
    assert c.br_due("br")
    c.on_snapshot("br", "br:2")
    assert not c.br_due("br")  # not until the new entries are in and solved
    seats = []
    while (task := c.next_task()) is not None:
        seats.append(task.seats)
        # br:2 beats br:1 from either seat
        win = 1.0 if task.seats[0] == "br:2" else -1.0 if task.seats[1] == "br:2" else 0.0
        c.report(task.task, [[win, -win]], exact=True)
    assert sorted(seats) == [("br:1", "br:2"), ("br:2", "br:1"), ("br:2", "br:2")]
    assert c.distribution() == pytest.approx({"br:1": 0.0, "br:2": 1.0})
    record = c.state.history[-1]
    assert record.iteration == 1 and record.episodes == 10 and record.eval_games == 0
    assert not c.br_due("br")  # the budget starts again at the solve


def test_iterations_cap_stops_new_best_responses():
    c, _ = coordinator(iterations=1)
    c.on_snapshot("br", "br:1")
    play_all(c)
    c.on_snapshot("br", "br:2")
    play_all(c)
    c.count_episode("br", 100)
    assert c.state.iteration == 1 and not c.br_due("br")


def test_sampled_entries_keep_games_and_a_confidence_half_width():
    c, _ = coordinator()
    c.on_snapshot("br", "br:1")
    task = c.next_task()
    returns = [[1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]]
    assert c.report(task.task, returns)
    assert c.state.games[0, 0, 0] == 4 and c.eval_games == 4
    assert c.state.payoffs[0, 0, 0] == pytest.approx(0.5)
    assert c.state.halfwidth[0, 0, 0] == pytest.approx(1.96 * np.std([1, -1, 1, 1], ddof=1) / 2)


def test_unknown_duplicate_and_bad_reports():
    c, _ = coordinator()
    c.on_snapshot("br", "br:1")
    task = c.next_task()
    assert not c.report(999, [[0.0, 0.0]])
    with pytest.raises(ValueError, match="finite returns"):
        c.report(task.task, [[np.nan, 0.0]])
    c.in_flight[task.task] = (task, 0.0)
    assert c.report(task.task, [[0.0, 0.0]], exact=True)
    assert not c.report(task.task, [[0.0, 0.0]], exact=True)  # a second report is ignored


def test_a_task_whose_evaluator_died_is_handed_out_again():
    c, clock = coordinator()
    c.on_snapshot("br", "br:1")
    first = c.next_task()
    assert c.next_task() is None
    clock.now = TASK_TIMEOUT_S + 1
    assert c.next_task() == first


def test_json_round_trip_requeues_tasks_in_flight():
    c, clock = coordinator()
    c.on_snapshot("br", "br:1")
    play_all(c)
    c.count_episode("br", 10)
    c.on_snapshot("br", "br:2")
    c.next_task()  # in flight when the checkpoint is taken
    clock.now = 5.0
    data = json.loads(json.dumps(c.to_json()))
    back, _ = coordinator()
    back.load_json(data)
    assert back.state.populations == [["br:1", "br:2"]]
    assert len(back.queue) == 3 and not back.in_flight
    assert back.episodes == {"br": 10} and back.elapsed() == pytest.approx(5.0)
    play_all(back)
    assert back.state.iteration == 1


def test_a_user_solver_script_is_loaded(tmp_path):
    script = tmp_path / "solve.py"
    script.write_text("import numpy as np\n"
                      "def newest(p):\n    return [np.eye(n)[-1] for n in p.shape[1:]]\n")
    c, _ = coordinator(solver=f"{script}:newest")
    c.on_snapshot("br", "br:1")
    play_all(c)
    c.on_snapshot("br", "br:2")
    play_all(c)
    assert c.distribution() == {"br:1": 0.0, "br:2": 1.0}


def test_per_seat_populations_join_together_and_are_drawn_per_seat():
    c, _ = coordinator(symmetric=False)
    assert c.players == ["br_0", "br_1"] and c.seat_of("br_1") == 1
    c.on_snapshot("br_0", "br_0:1")
    assert c.state.populations == [[], []] and c.next_task() is None  # waits for seat 1
    c.on_snapshot("br_1", "br_1:1")
    task = c.next_task()
    assert task.seats == ("br_0:1", "br_1:1") and c.next_task() is None
    c.report(task.task, [[1.0, -1.0]], exact=True)
    assert c.distribution(0) == {"br_0:1": 1.0} and c.distribution(1) == {"br_1:1": 1.0}
    c.count_episode("br_0", 10)
    assert c.br_due("br_0") and not c.br_due("br_1")
    c.on_snapshot("br_0", "br_0:2")
    assert not c.br_due("br_0")  # pending until seat 1's next response
    c.count_episode("br_1", 10)
    c.on_snapshot("br_1", "br_1:2")
    assert sorted(t.seats for t in iter(c.next_task, None)) == [
        ("br_0:1", "br_1:2"), ("br_0:2", "br_1:1"), ("br_0:2", "br_1:2")]


def test_a_meta_game_whose_solve_failed_is_solved_on_resume():
    """'nash' on a game that is not zero-sum fails once every entry is in; a run resumed with
    another solver solves the same meta-game and goes on (it used to wait for entries)."""
    c, _ = coordinator()
    c.on_snapshot("br", "br:1")
    play_all(c)
    c.count_episode("br", 10)
    c.on_snapshot("br", "br:2")
    with pytest.raises(ValueError, match="zero-sum"):
        play_all(c, lambda seats: [1.0, 1.0] if "br:2" in seats else [0.0, 0.0])
    data = json.loads(json.dumps(c.to_json()))
    assert not data["solved"] and c.state.iteration == 0
    back, _ = coordinator(solver="prd")
    back.load_json(data)
    assert back.solved and back.state.iteration == 1 and not back.queue
    assert sum(back.distribution().values()) == pytest.approx(1.0)
    back.count_episode("br", 10)
    assert back.br_due("br")
