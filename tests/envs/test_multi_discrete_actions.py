"""MultiDiscrete actions reaching games: rows checked against the space and against each
component's slice of the mask before the game sees them, all-legal masks for seats without
one, the built-in random bot and script bots, and ``validate-env``."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from msagent.envs.adapters import as_multi_agent
from msagent.envs.adapters.base import check_action, full_mask
from msagent.envs.bots import Bot, RandomBot, random_action
from msagent.errors import IllegalActionError
from msagent.validate_env import validate_env
from tests.envs.twin_target_game import TwinTarget

SPACE = gym.spaces.MultiDiscrete([3, 2])
GAME = Path(__file__).with_name("twin_target_game.py")


def test_a_row_in_the_space_is_given_to_the_game_as_int64() -> None:
    row = check_action("g", "p", [2, 1], None, SPACE)
    assert row.dtype == np.int64 and row.tolist() == [2, 1]
    assert check_action("g", "p", np.array([1.0, 0.0], np.float32), None, SPACE).tolist() == [1, 0]


@pytest.mark.parametrize("action", [[3, 0], [0, 2], [-1, 0], [1], [1, 0, 0], [0.5, 1], 1])
def test_a_row_outside_the_space_is_refused_naming_it(action) -> None:
    with pytest.raises(IllegalActionError, match=r"seat p chose action .* outside the action "
                       r"space MultiDiscrete\(\[3 2\]\)"):
        check_action("g", "p", action, None, SPACE)


def test_a_row_against_its_mask_is_refused_component_by_component() -> None:
    mask = np.array([1, 0, 1, 0, 1], bool)  # colours 0 and 2; size 1 only
    assert check_action("g", "p", [2, 1], mask, SPACE).tolist() == [2, 1]
    for action in ([1, 1], [0, 0]):
        with pytest.raises(IllegalActionError, match=r"is not legal under the mask "
                           r"\[1, 0, 1, 0, 1\]"):
            check_action("g", "p", action, mask, SPACE)
    with pytest.raises(IllegalActionError, match="not legal"):
        check_action("g", "p", [0, 1], np.ones(4, bool), SPACE)  # a mask of the wrong width


def test_the_game_s_masks_reach_the_policy_and_an_illegal_row_never_reaches_the_game() -> None:
    game = TwinTarget()
    env = as_multi_agent(game)
    turn = env.reset(seed=3)
    banned = game.banned["player_0"]
    assert turn.masks[0].shape == (5,) and not turn.masks[0][banned] and turn.masks[0][3:].all()
    with pytest.raises(IllegalActionError, match="player_0 chose action"):
        env.step({0: [banned, 0], 1: [game.targets["player_1"][0], 0]})
    assert game.actions == []
    target = game.targets["player_0"]
    turn = env.step({0: target, 1: [int(game.targets["player_1"][0]), 0]})
    assert turn.rewards[0] in (0.0, 1.0) and len(game.actions) == 1


def test_seats_without_a_mask_get_an_all_legal_one_of_every_component() -> None:
    assert full_mask(SPACE).tolist() == [True] * 5
    assert full_mask(gym.spaces.Discrete(3)).tolist() == [True] * 3
    assert full_mask(gym.spaces.Box(-1, 1, (2,))) is None
    assert full_mask(gym.spaces.MultiBinary(3)).tolist() == [True] * 6


def test_a_multi_binary_row_is_checked_as_n_choices_of_two() -> None:
    space = gym.spaces.MultiBinary(3)
    assert check_action("g", "p", [1, 0, 1], None, space).tolist() == [1, 0, 1]
    with pytest.raises(IllegalActionError, match="outside the action space"):
        check_action("g", "p", [2, 0, 1], None, space)
    with pytest.raises(IllegalActionError, match="not legal under the mask"):
        check_action("g", "p", [1, 0, 1], np.array([1, 1, 1, 1, 1, 0], bool), space)


def test_the_random_bot_keeps_to_each_component_s_mask() -> None:
    mask = np.array([0, 1, 0, 1, 1], bool)
    bot = RandomBot(SPACE, seed=0)
    actions = bot(np.zeros((300, 5)), np.repeat(mask[None], 300, 0))
    assert actions.shape == (300, 2) and actions.dtype == np.int64
    assert (actions[:, 0] == 1).all() and set(actions[:, 1]) == {0, 1}
    free = np.array([random_action(SPACE, None, np.random.default_rng(i)) for i in range(50)])
    assert free.shape == (50, 2) and SPACE.contains(free[0])


def test_a_script_bot_s_list_is_accepted_by_the_game() -> None:
    bot = Bot("lister", lambda obs, mask: [int(np.argmax(obs[:3])), int(np.argmax(obs[3:]))])
    game = TwinTarget()
    env = as_multi_agent(game)
    turn = env.reset(seed=0)
    rows = bot([turn.obs[0], turn.obs[1]], [turn.masks[0], turn.masks[1]])
    env.step({0: rows[0], 1: rows[1]})
    assert rows.dtype == np.float32  # a script's list, as a Box bot's would be
    assert game.actions[0]["player_0"].tolist() == rows[0].tolist()
    assert game.actions[0]["player_0"].dtype == np.int64


def test_validate_env_passes_the_game_and_flags_a_component_with_no_legal_choice(
        tmp_path: Path) -> None:
    report = validate_env(str(GAME), {}, steps=200)
    assert report.ok, report.render()
    script = tmp_path / "bad_env.py"
    script.write_text("from tests.envs.twin_target_game import TwinTarget\n\n\n"
                      "class NoSize(TwinTarget):\n"
                      "    def _infos(self, agents=None):\n"
                      "        infos = super()._infos(agents)\n"
                      "        for info in infos.values():\n"
                      "            info['action_mask'][3:] = 0\n"
                      "        return infos\n\n\n"
                      "def make_env():\n    return NoSize()\n")
    report = validate_env(str(script), {}, steps=50)
    assert not report.ok and "mask allows no action" in report.render()


def test_the_random_bot_keeps_to_a_multi_binary_mask() -> None:
    space = gym.spaces.MultiBinary(3)
    mask = np.array([1, 0, 1, 1, 0, 1], bool)  # first 0, second 0 or 1, third 1
    rows = np.array([random_action(space, mask, np.random.default_rng(i)) for i in range(60)])
    assert (rows[:, 0] == 0).all() and (rows[:, 2] == 1).all() and set(rows[:, 1]) == {0, 1}
    assert all(check_action("g", "p", row, mask, space).tolist() == row.tolist() for row in rows)
