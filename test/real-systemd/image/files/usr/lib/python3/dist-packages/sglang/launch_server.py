"""`python3 -m sglang.launch_server ...` in the real-systemd test container: SGLang's command line, start-up log
and HTTP surface, served by relaying to the demo simulation (see pd_standin)."""

import argparse
import os
import signal
import sys
import time

from tqdm import tqdm

from pd_standin import log, raw, raw_bytes, relay_server, unit_behaviour, upstream

# sglang/srt/model_loader/weight_utils.py: "explicitly use pure text format, with a newline at the end" — each
# redraw of the shard bar is a line of its own.
_BAR_FORMAT = "{desc}: {percentage:3.0f}% Completed | {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_fmt}]\n"

# sglang/srt/model_executor/cuda_graph_runner.py: the batch sizes captured, largest first.
CAPTURE_BS = [256, 224, 192, 160, 128, 112, 96, 80, 64, 56, 48, 40, 32, 24, 16, 12, 8, 4, 2, 1]

# The ServerArgs fields SGLang prints at start-up beyond the ones given on the command line, with their
# defaults: the real line is several kilobytes, which is what journald's 4096-byte field limit meets.
DEFAULT_FIELDS = [
    ("tokenizer_mode", "'auto'"), ("tokenizer_worker_num", "1"), ("skip_tokenizer_init", "False"),
    ("load_format", "'auto'"), ("model_loader_extra_config", "'{}'"), ("trust_remote_code", "True"),
    ("context_length", "None"), ("is_embedding", "False"), ("enable_multimodal", "None"),
    ("revision", "None"), ("model_impl", "'auto'"), ("skip_server_warmup", "False"), ("warmups", "None"),
    ("nccl_port", "None"), ("checkpoint_engine_wait_weights_before_ready", "False"), ("dtype", "'auto'"),
    ("quantization", "None"), ("quantization_param_path", "None"), ("kv_cache_dtype", "'auto'"),
    ("enable_fp32_lm_head", "False"), ("modelopt_quant", "None"), ("modelopt_checkpoint_restore_path", "None"),
    ("modelopt_checkpoint_save_path", "None"), ("modelopt_export_path", "None"),
    ("quantize_and_serve", "False"), ("mem_fraction_static", "0.835"), ("max_running_requests", "None"),
    ("max_queued_requests", "None"), ("max_total_tokens", "None"), ("chunked_prefill_size", "8192"),
    ("enable_dynamic_chunking", "False"), ("max_prefill_tokens", "16384"), ("prefill_max_requests", "None"),
    ("schedule_policy", "'fcfs'"), ("enable_priority_scheduling", "False"),
    ("abort_on_priority_when_disabled", "False"), ("schedule_low_priority_values_first", "False"),
    ("priority_scheduling_preemption_threshold", "10"), ("schedule_conservativeness", "1.0"),
    ("page_size", "1"), ("hybrid_kvcache_ratio", "None"), ("swa_full_tokens_ratio", "0.8"),
    ("disable_hybrid_swa_memory", "False"), ("radix_eviction_policy", "'lru'"), ("device", "'cuda'"),
    ("pp_size", "1"), ("pp_max_micro_batch_size", "None"), ("stream_interval", "1"),
    ("stream_output", "False"), ("random_seed", "928476211"), ("constrained_json_whitespace_pattern", "None"),
    ("constrained_json_disable_any_whitespace", "False"), ("watchdog_timeout", "300"),
    ("dist_timeout", "None"), ("download_dir", "None"), ("model_checksum", "None"),
    ("sleep_on_idle", "False"), ("mm_process_config", "{}"), ("log_level", "'info'"),
    ("log_level_http", "None"), ("log_requests", "False"), ("log_requests_level", "2"),
    ("crash_dump_folder", "None"), ("show_time_cost", "False"), ("enable_metrics_for_all_schedulers", "False"),
    ("tokenizer_metrics_custom_labels_header", "'x-custom-labels'"),
    ("tokenizer_metrics_allowed_custom_labels", "None"), ("bucket_time_to_first_token", "None"),
    ("bucket_inter_token_latency", "None"), ("bucket_e2e_request_latency", "None"),
    ("collect_tokens_histogram", "False"), ("prompt_tokens_buckets", "None"),
    ("generation_tokens_buckets", "None"), ("gc_warning_threshold_secs", "0.0"),
    ("decode_log_interval", "40"), ("enable_request_time_stats_logging", "False"),
    ("kv_events_config", "None"), ("enable_trace", "False"), ("otlp_traces_endpoint", "'localhost:4317'"),
    ("export_metrics_to_file", "False"), ("export_metrics_to_file_dir", "None"),
    ("admin_api_key", "None"), ("file_storage_path", "'sglang_storage'"),
    ("enable_cache_report", "False"), ("reasoning_parser", "None"), ("tool_call_parser", "None"),
    ("tool_server", "None"), ("sampling_defaults", "'model'"), ("dp_size", "1"),
    ("load_balance_method", "'round_robin'"), ("load_watch_interval", "0.1"),
    ("prefill_round_robin_balance", "False"), ("dist_init_addr", "None"), ("nnodes", "1"),
    ("node_rank", "0"), ("preferred_sampling_params", "None"), ("enable_lora", "None"),
    ("max_lora_rank", "None"), ("lora_target_modules", "None"), ("lora_paths", "None"),
    ("max_loaded_loras", "None"), ("max_loras_per_batch", "8"), ("lora_backend", "'triton'"),
    ("max_lora_chunk_size", "16"), ("attention_backend", "'fa3'"), ("decode_attention_backend", "None"),
    ("prefill_attention_backend", "None"), ("sampling_backend", "'flashinfer'"),
    ("grammar_backend", "'xgrammar'"), ("mm_attention_backend", "None"),
    ("speculative_algorithm", "None"), ("speculative_draft_model_path", "None"),
    ("speculative_draft_model_revision", "None"), ("speculative_num_steps", "None"),
    ("speculative_eagle_topk", "None"), ("speculative_num_draft_tokens", "None"),
    ("speculative_accept_threshold_single", "1.0"), ("speculative_accept_threshold_acc", "1.0"),
    ("speculative_token_map", "None"), ("ep_size", "1"), ("moe_a2a_backend", "'none'"),
    ("moe_runner_backend", "'auto'"), ("flashinfer_mxfp4_moe_precision", "'default'"),
    ("enable_flashinfer_allreduce_fusion", "False"), ("deepep_mode", "'auto'"),
    ("ep_num_redundant_experts", "0"), ("ep_dispatch_algorithm", "'static'"),
    ("init_expert_location", "'trivial'"), ("enable_eplb", "False"), ("eplb_algorithm", "'auto'"),
    ("enable_hierarchical_cache", "False"), ("hicache_ratio", "2.0"), ("hicache_size", "0"),
    ("hicache_write_policy", "'write_through'"), ("hicache_io_backend", "'kernel'"),
    ("hicache_mem_layout", "'layer_first'"), ("hicache_storage_backend", "None"),
    ("hicache_storage_prefetch_policy", "'best_effort'"), ("hicache_storage_backend_extra_config", "None"),
    ("enable_double_sparsity", "False"), ("cuda_graph_max_bs", "256"), ("cuda_graph_bs", "None"),
    ("disable_cuda_graph", "False"), ("disable_cuda_graph_padding", "False"),
    ("enable_profile_cuda_graph", "False"), ("enable_cudagraph_gc", "False"), ("enable_nccl_nvls", "False"),
    ("enable_symm_mem", "False"), ("disable_flashinfer_cutlass_moe_fp4_allgather", "False"),
    ("enable_tokenizer_batch_encode", "False"), ("disable_outlines_disk_cache", "False"),
    ("disable_custom_all_reduce", "False"), ("enable_mscclpp", "False"), ("disable_overlap_schedule", "False"),
    ("enable_mixed_chunk", "False"), ("enable_dp_attention", "False"), ("enable_dp_lm_head", "False"),
    ("enable_two_batch_overlap", "False"), ("enable_torch_compile", "False"),
    ("torch_compile_max_bs", "32"), ("triton_attention_num_kv_splits", "8"), ("num_continuous_decode_steps", "1"),
    ("delete_ckpt_after_loading", "False"), ("enable_memory_saver", "False"),
    ("allow_auto_truncate", "False"), ("enable_custom_logit_processor", "False"),
    ("flashinfer_mla_disable_ragged", "False"), ("disable_shared_experts_fusion", "False"),
    ("disable_chunked_prefix_cache", "False"), ("disable_fast_image_processor", "False"),
    ("keep_mm_feature_on_device", "False"), ("enable_return_hidden_states", "False"),
    ("scheduler_recv_interval", "1"), ("numa_node", "None"), ("enable_deterministic_inference", "False"),
    ("debug_tensor_dump_output_folder", "None"), ("debug_tensor_dump_input_file", "None"),
    ("disaggregation_transfer_backend", "'mooncake'"), ("disaggregation_decode_tp", "None"),
    ("disaggregation_decode_dp", "None"), ("disaggregation_prefill_pp", "1"),
    ("disaggregation_ib_device", "None"), ("num_reserved_decode_tokens", "512"),
    ("disaggregation_decode_polling_interval", "1"), ("custom_weight_loader", "[]"),
    ("weight_loader_disable_mmap", "False"), ("enable_pdmux", "False"), ("sm_group_num", "8"),
]


def parse():
    p = argparse.ArgumentParser(prog="sglang.launch_server", allow_abbrev=False)
    p.add_argument("--model-path", "--model", dest="model_path", required=True)
    p.add_argument("--tokenizer-path", default=None)
    p.add_argument("--served-model-name", default=None)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--tp-size", "--tp", dest="tp_size", type=int, default=1)
    p.add_argument("--dp-size", "--dp", dest="dp_size", type=int, default=1)
    p.add_argument("--base-gpu-id", type=int, default=0)
    p.add_argument("--enable-metrics", action="store_true")
    p.add_argument("--disaggregation-mode", default="null")
    p.add_argument("--disaggregation-bootstrap-port", type=int, default=8998)
    p.add_argument("--json-model-override-args", default="{}")
    p.add_argument("--api-key", default=None)
    p.add_argument("--mem-fraction-static", default=None)
    args, _unknown = p.parse_known_args()
    return args


def server_args_line(a):
    given = [
        ("model_path", repr(a.model_path)),
        ("tokenizer_path", repr(a.tokenizer_path or a.model_path)),
        ("host", repr(a.host)),
        ("port", str(a.port)),
        ("tp_size", str(a.tp_size)),
        ("base_gpu_id", str(a.base_gpu_id)),
        ("api_key", repr(a.api_key)),
        ("served_model_name", repr(a.served_model_name or a.model_path)),
        ("enable_metrics", str(a.enable_metrics)),
        ("json_model_override_args", repr(a.json_model_override_args)),
        ("disaggregation_mode", repr(a.disaggregation_mode)),
        ("disaggregation_bootstrap_port", str(a.disaggregation_bootstrap_port)),
    ]
    fields = given + [(k, v) for k, v in DEFAULT_FIELDS if k not in dict(given)]
    return "server_args=ServerArgs(" + ", ".join(f"{k}={v}" for k, v in fields) + ")"


def load(a, b):
    log(server_args_line(a))
    burn = float(b.get("burnCpuS", 0))
    if burn:
        # What loading costs in CPU, so that systemd has CPU time worth logging when the process ends.
        started = time.process_time()
        while time.process_time() - started < burn:
            pass
    if b.get("invalidUtf8"):
        # A tokenizer warning quoting bytes that are not UTF-8: journald stores such a line as a byte array.
        raw_bytes(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}] Detokenizer output: ".encode() + b"\xff\xfe\xc3\x28 garbled\n")
    log("Init torch distributed begin.", rank=0)
    log("Init torch distributed ends. mem usage=0.91 GB", rank=0)
    if b.get("failWith"):
        log("Load weight begin. avail mem=78.53 GB", rank=0)
        raw("Traceback (most recent call last):\n"
            '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
            '  File "/usr/lib/python3/dist-packages/sglang/launch_server.py", line 14, in <module>\n'
            "    from sglang.srt.entrypoints.http_server import launch_server\n"
            f"{b['failWith']}\n")
        sys.exit(1)
    log("Load weight begin. avail mem=78.53 GB", rank=0)
    shards = int(b.get("shards", 17))
    seconds = float(b.get("loadSeconds", 2))
    # The real tqdm, as SGLang's weight loader runs it (on stderr, which journald reads line by line).
    for _ in tqdm(range(shards), desc="Loading safetensors checkpoint shards", bar_format=_BAR_FORMAT):
        time.sleep(seconds / shards)
    log("Load weight end. type=DeepseekV4ForCausalLM, dtype=torch.bfloat16, avail mem=62.87 GB, mem usage=15.66 GB.", rank=0)
    log("KV Cache is allocated. #tokens: 851984, K size: 26.34 GB, V size: 26.34 GB", rank=0)
    if a.disaggregation_mode == "decode":
        capture(float(b.get("captureSeconds", 1)))


def capture(seconds):
    """CUDA graph capture as the decode server logs it: a default tqdm bar (no newline in its format), so its
    redraws reach journald joined by carriage returns, as one line when the bar closes."""
    log("Capture cuda graph begin. This can take up to several minutes. avail mem=7.90 GB", rank=0)
    capture_range = tqdm(CAPTURE_BS)
    for i, bs in enumerate(capture_range):
        avail_mem = 7.9 - 1.5 * i / len(CAPTURE_BS)
        capture_range.set_description(f"Capturing batches ({bs=} {avail_mem=:.2f} GB)")
        time.sleep(seconds / len(CAPTURE_BS))
    log(f"Capture cuda graph end. Time elapsed: {seconds:.2f} s. mem usage=1.52 GB. avail mem=6.38 GB.", rank=0)


def main():
    a = parse()
    b = unit_behaviour()
    load(a, b)
    up = upstream()
    role = a.disaggregation_mode if a.disaggregation_mode in ("prefill", "decode") else "prefill"
    target = up.get(role, "")

    def local(h):
        if h.path.split("?")[0] == "/metrics" and not a.enable_metrics:
            h.answer(404, b'{"detail":"Not Found"}', "application/json")
            return True
        return False

    srv = relay_server(a.host, a.port, target, up.get("rewrite", {}), local)
    sys.stdout.write(f"INFO:     Started server process [{os.getpid()}]\n")
    sys.stdout.write("INFO:     Waiting for application startup.\nINFO:     Application startup complete.\n")
    sys.stdout.write(f"INFO:     Uvicorn running on http://{a.host}:{a.port} (Press CTRL+C to quit)\n")
    sys.stdout.flush()
    log("The server is fired up and ready to roll!")
    crash = b.get("crashAfterS")
    if crash is not None:
        import threading

        def die():
            time.sleep(float(crash))
            log("Scheduler hit an exception: Traceback (most recent call last):", rank=0)
            raw('  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 2966, in run_scheduler_process\n'
                "    scheduler.event_loop_overlap()\n"
                "RuntimeError: CUDA error: an illegal memory access was encountered\n"
                "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n\n")
            log("Received sigquit from a child process. It usually means the child failed.")
            # sglang.srt.utils.kill_process_tree(os.getpid()): SIGKILL to the whole tree, itself included.
            os.kill(os.getpid(), signal.SIGKILL)

        threading.Thread(target=die, daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
