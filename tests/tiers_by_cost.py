"""Tiers by measured cost: the tests moved out of the tier their file's markers give them.

The default tier must run in <= 15 minutes from an empty cache on the 2-core CI machine and
both tiers in <= 40 (README, "Tests"). These lists come from one cold run of the whole
suite (``--durations=0``, 2026-11-27, records/test_durations/): ``TO_TIER2`` are the
default tier's tests of >= 19 s, then of >= 27 s in a second and >= 30 s in a third cold
run of what remained (each compiles programs few other default-tier tests share),
``TO_SLOW`` the second tier's largest tests that a cheaper second-tier test already covers
(the larger matrix of a comparison, a longer game, an end-to-end experiment whose parts
have their own tests). ``python -m pytest -m slow`` runs them; nothing here is deleted.
The ids are exact pytest node ids, or a file's path for all its tests;
``tests/test_tiers.py`` checks that each still names a collected test.
"""

from __future__ import annotations

TO_TIER2 = frozenset({
    "tests/test_device_search.py::test_search_function_equals_searcher_and_composes",
    "tests/test_device_search.py::test_device_and_host_rules_give_identical_trees_small",
    "tests/test_move_filter.py::test_filtered_search_equals_filtered_reference",
    "tests/test_program_store.py::test_a_searcher_reloads_its_programs_without_tracing[4]",
    "tests/test_device_rules.py::test_root_mate_check_equals_the_hosts",
    "tests/test_pipeline_threads.py::test_threaded_shards_grow_the_same_trees_from_two_threads",
    "tests/test_device_search.py::test_cpu_shards_search_side_by_side_as_one_after_the_other",
    "tests/test_certainty.py::test_bounds_equal_reference[L1]",
    "tests/test_contempt_options.py::test_search_equals_reference[L8-temperature-hybrid]",
    "tests/test_device_rules.py::test_expand_equals_host_expander[False]",
    "tests/test_step_copies.py::test_the_sizes_are_the_trees_own",
    "tests/test_games_networks.py::test_evaluation_cache_never_answers_for_other_params",
    "tests/test_smart_pruning.py::test_stops_where_reference_stops[1.33]",
    "tests/test_uci_time_manager.py::test_sudden_death_40_move_game_with_a_40_move_horizon[600000-100]",
    "tests/test_contempt_options.py::test_search_equals_reference[L3-schedule]",
    "tests/test_uci_driver.py::test_no_compile_inside_searches_after_warmup",
    "tests/test_certainty.py::test_mates_are_proven_and_scored_as_python_chess",
    "tests/test_device_rules.py::test_random_games_agree_with_python_chess",
    "tests/test_search_properties.py::test_sharding_does_not_change_results",
    "tests/test_search_properties.py::test_frozen_nodes_follow_frozen_distribution",
    "tests/test_gather_reference.py::test_in_flight_after_a_gather_equals_reference[2]",
    "tests/test_cli.py::test_epd_batch_and_ids",
    "tests/test_certainty.py::test_bounds_equal_reference[L4]",
    "tests/test_analysis_protocol.py::test_the_evaluation_cache_is_on_and_reaches_the_searcher",
    "tests/test_games_networks.py::test_training_hook_plays_the_games_loop_games",
    "tests/test_fuzz.py::test_search_fuzz",
    "tests/test_multileaf.py::test_full_edge_pool_stops_expanding_cleanly[1]",
    "tests/test_gather_reference.py::test_full_tree_drops_like_the_reference",
    "tests/test_multileaf.py::test_position_only_cache_key_hits_transpositions",
    "tests/test_builtin.py::test_mcts_search_finds_tactics",
    "tests/test_moves_left.py::test_moves_left_search_equals_reference[L1-strong]",
    "tests/test_chess960.py::test_search_plays_chess960_castling",
    "tests/test_multileaf.py::test_full_edge_pool_stops_expanding_cleanly[4]",
    "tests/test_env.py::test_mctx_gumbel_example_plays_legal_games_in_one_jit",
    "tests/test_rules.py::test_expand_matches_python_chess_random_games",
    "tests/test_move_filter.py::test_results_show_only_searched_root_moves",
    "tests/test_device_rules.py::test_mate_check_finds_the_first_mate_in_index_order",
    "tests/test_cli.py::test_epd_results_print_batch_by_batch",
    "tests/test_gather_reference.py::test_multi_leaf_search_equals_reference[L8-collisions]",
    "tests/test_certainty.py::test_lost_position_scores_negative_mate",
    "tests/test_cli.py::test_analyse_json_schema_and_policy",
    "tests/test_multileaf.py::test_infinite_nscl_is_puct_at_every_width[4-1]",
    "tests/test_bench_analysis.py::test_positions_beyond_the_sample_cycle_with_other_continuations",
    "tests/test_pipeline_threads.py::test_a_shared_cache_keeps_one_expanding_thread_and_runs_networks_beside_it",
    "tests/test_multileaf.py::test_time_limit_stops_the_run",
    "tests/test_search_properties.py::test_full_tree_stops_cleanly",
    "tests/test_smart_pruning.py::test_off_by_default_and_one_legal_move_stops_at_once",
    # a second cold run of the default tier (20:17): the compile the first moves left
    # behind, paid by the next test of the same programs
    "tests/test_uci_driver.py::test_a_position_that_continues_the_game_reuses_the_tree",
    "tests/test_gather_reference.py::test_multi_leaf_search_equals_reference[L3-contempt-absfpu]",
    "tests/test_step_copies.py::test_no_tree_array_is_copied_inside_a_loop[select]",
    "tests/test_mate_check.py::test_mate_check_after_tree_reuse",
    "tests/test_smart_pruning.py::test_stops_where_reference_stops[4.0]",
    "tests/test_moves_left.py::test_moves_left_search_equals_reference[L1-mid]",
    "tests/test_mate_check.py::test_builtin_proves_mate_in_two",
    "tests/test_contempt_options.py::test_search_equals_reference[L8-linear-T0]",
    "tests/test_pipeline_threads.py::test_progress_reports_the_whole_batch_from_threads",
    "tests/test_fuzz.py::test_run_count_fuzz",
    "tests/test_cli.py::test_table_output",
    "tests/test_mate_check.py::test_mate_check_search_equals_reference[L1]",
    "tests/test_search_properties.py::test_invariants",
    "tests/test_search_idle_shard.py::test_a_shard_without_work_runs_like_one_shard",
    "tests/test_multileaf.py::test_multi_leaf_invariants[8-2]",
    "tests/test_multileaf.py::test_infinite_nscl_is_puct_at_every_width[4-2]",
    "tests/test_mctx.py::test_alphazero_selection_reproduces_mctx_muzero_policy",
    "tests/test_games_networks.py::test_params_groups_do_not_change_the_games",
    "tests/test_kld_stop.py::test_stops_where_lc0s_stopper_stops",
    "tests/test_multileaf.py::test_cache_gives_equal_results_and_hits[1-1]",
    "tests/test_multileaf.py::test_infinite_nscl_is_puct_at_every_width[1-1]",
    "tests/test_multileaf.py::test_cache_gives_equal_results_and_hits[4-2]",
    "tests/test_move_filter.py::test_other_trees_of_the_batch_do_not_see_a_filter",
    # whole files whose module fixture compiles what every test of the file searches with
    "tests/test_uci_driver.py",
    "tests/test_step_copies.py",
    # the rest of the tests on test_games_networks' ``plain`` games (its fixture's compile)
    "tests/test_games_networks.py::test_per_player_params_equal_a_model_holding_them",
    "tests/test_games_networks.py::test_on_search_reports_every_search",
    "tests/test_games_networks.py::test_capped_games_value_targets_by_material",
    # a third cold run (14:45 of pytest: over 15 minutes with CI's install)
    "tests/test_multileaf.py",
    "tests/test_uci_timeline.py::test_a_search_writes_its_record",
    "tests/test_uci_timeline.py::test_stop_is_not_held_up_by_a_long_step",
    "tests/test_cli.py::test_p_shows_the_networks_prior_after_the_mate_check",
    "tests/test_contempt_options.py::test_search_equals_reference[L8-mixed]",
    "tests/test_certainty.py::test_certainty_off_proves_nothing_but_game_ends",
    "tests/test_certainty.py::test_bounds_equal_reference[L1-off]",
    "tests/test_moves_left.py::test_moves_left_search_equals_reference[L1-lc0-defaults]",
    "tests/test_pipeline_threads.py::test_the_default_on_cpu_is_the_threaded_driver",
    "tests/test_kld_stop.py::test_high_minimum_stops_early_zero_never_in_one_batch",
    "tests/test_move_filter.py::test_reset_with_and_without_filters_never_recompiles",
    "tests/test_settings.py::test_a_full_tree_stops_at_once_and_resumes_the_same",
})

TO_SLOW = frozenset({
    "tests/test_train_run.py::test_train_efficiency_experiment_end_to_end",
    "tests/test_device_rules.py::test_more_random_games_agree_with_python_chess",
    "tests/test_train_run.py::test_a_run_on_device_rules_plays_the_host_runs_games",
    "tests/test_device_search.py::test_device_and_host_rules_give_identical_trees[16-0]",
    "tests/test_device_search.py::test_device_and_host_rules_give_identical_trees[1-4096]",
    "tests/test_selfplay.py::test_resume_after_interruption",
    "tests/test_device_selfplay.py::test_games_are_legal_and_end_as_python_chess_says",
    "tests/test_selfplay.py::test_a_game_tree_sized_to_its_nodes_never_runs_out_of_edges",
    "tests/test_selfplay.py::test_batch_independence_with_per_tree_seeds",
    # 2026-11-28 (a loaded whole tier-2 run, records/test_durations/2026-11-28/): the search
    # inside a user's lax.scan is what the device game loop's scan runs (test_device_loop,
    # its games equal the host loop's) and the AZ example; analyse on device rules is the
    # Searcher whose trees test_device_and_host_rules_give_identical_trees_small compares
    "tests/test_device_search.py::test_search_function_runs_inside_scan",
    "tests/test_device_search.py::test_analyse_on_device_rules_equals_host_rules",
    # 2026-11-28 (session 21): the host loop on device rules is test_ply_sources' host
    # source, compared with the scan ply for ply, and which source serves a run is
    # can_play's (test_ply_sources, default tier); tree reuse on device rules is
    # test_device_and_host_rules_give_identical_trees_small's. PUCT at N_scl = inf is
    # checked at widths 1-1, 4-1 and 4-2 without the largest, 8-2.
    "tests/test_device_loop.py::test_games_the_scan_cannot_play_step_on_the_host_loop",
    "tests/test_multileaf.py::test_infinite_nscl_is_puct_at_every_width[8-2]",
})


# Seconds each file's tests of a tier took in one worker (the sums of ``--durations=0`` of
# records/test_durations/2026-11-28/tier{1,2}_loaded_3333a1d_durations.log, a loaded
# machine: read them as ratios). conftest hands xdist the files costliest first (with
# ``--no-loadscope-reorder``), so no long file starts last while the other worker idles;
# files under 20 s are left out and go last in collection order.
FILE_SECONDS: dict[str, dict[str, int]] = {
    "default": {
        "test_contempt_options": 440, "test_search_reference": 410, "test_device_rules": 370,
        "test_reuse": 350, "test_training": 340, "test_builtin": 310, "test_move_filter": 310,
        "test_search_properties": 280, "test_settings": 250, "test_uci_time_manager": 180,
        "test_certainty": 150, "test_rules_conformance": 150, "test_games_networks": 140,
        "test_uci_core_options": 120, "test_cli": 120, "test_env": 120,
        "test_hostile_inputs": 110, "test_lc0_export": 70, "test_mate_check": 70,
        "test_moves_left": 60, "test_fuzz": 50, "test_program_store": 50, "test_read_path": 40,
        "test_mctx": 40, "test_gather_reference": 40, "test_bench": 40, "test_draw_claims": 30,
        "test_bench_analysis": 30, "test_lc0_equivalence": 30, "test_chess960": 20,
        "test_layers": 20,
    },
    "tier2": {
        "test_device_search": 480, "test_multileaf": 400, "test_midgame_resume": 350,
        "test_device_loop": 310, "test_step_copies": 270, "test_analysis_engine": 220,
        "test_notebooks": 200, "test_certainty": 200, "test_bench": 170,
        "test_scan_experiments_tier2": 160, "test_uci_start_process": 150,
        "test_ply_sources": 150, "test_train_run": 140, "test_games_networks": 130,
        "test_hostile_search": 130, "test_profile": 120, "test_analysis_fuzz": 110,
        "test_search_properties": 110, "test_pipeline_threads": 110, "test_experiments": 110,
        "test_az_example": 110, "test_uci_engine": 100, "test_gather_reference": 100,
        "test_contempt_options": 90, "test_selfplay": 90, "test_cli": 90,
        "test_device_rules": 80, "test_bench_analysis": 80, "test_bench_smart_pruning": 50,
        "test_odds_table1": 50, "test_smart_pruning": 50, "test_program_store": 50,
        "test_resume": 40, "test_move_filter": 40, "test_analysis_protocol": 40,
        "test_fuzz": 40, "test_chess960": 30, "test_env": 30, "test_uci_match": 30,
        "test_uci_driver": 20, "test_mctx": 20, "test_lc0_equivalence": 20,
    },
}

# Files that compile the same large programs (the device game scan, and the host and device
# rules' searchers, at test_selfplay's shape: 8 trees of 17 nodes) run in one worker, one
# after the other: the first compiles them, the others find them compiled (``--dist
# loadgroup``), instead of two workers compiling them at once.
SHARED_PROGRAM_GROUPS: dict[str, str] = {
    "test_device_loop": "game_scan", "test_midgame_resume": "game_scan",
    "test_ply_sources": "game_scan", "test_selfplay": "game_scan",
}
