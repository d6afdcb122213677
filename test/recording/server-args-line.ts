// The line every SGLang server logs at start-up (`server_args=ServerArgs(…)`, Python's dataclass repr), with
// every field that can carry a secret set to a planted one. Field names and order follow a real SGLang log; the
// secret-bearing fields are those of python/sglang/srt/server_args.py (and its arg_groups): the API keys, the SSL
// key password, model/tokenizer/draft paths that may be URLs with credentials, the JSON configs handed to model
// loaders, HiCache storage backends (Mooncake, 3FS, EIC…) and KV-event publishers, the OpenTelemetry endpoint,
// tool-server and encoder URLs and LoRA adapters given as URLs.

/** Every planted secret, by the field that carries it. */
export const SERVER_ARGS_SECRETS = {
  api_key: 'sk-PLANTEDapiKEY0123456789abcdef',
  admin_api_key: 'PLANTED-admin-key-7f3a9c',
  ssl_keyfile_password: 'PLANTED ssl pass phrase',
  tokenizer_path_token: 'PLANTEDtokQueryToken42',
  draft_model_url_password: 'PLANTEDdraftPw',
  loader_secret_access_key: 'PLANTEDwJalrXUtnFEMIK7MDENGbPxRfiCY',
  loader_access_key_id: 'PLANTEDMINIOKEYID',
  hicache_password: 'PLANTEDmooncakeMasterPw',
  hicache_secret_key: 'PLANTED3fsSecretKey',
  kv_events_url_password: 'PLANTEDzmqPw',
  otlp_url_password: 'PLANTEDotlpPw',
  tool_server_url_password: 'PLANTEDtoolPw',
  tool_server_token: 'PLANTEDtoolToken',
  encoder_url_password: 'PLANTEDencoderPw',
  lora_url_password: 'PLANTEDloraPw',
  lora_sas_sig: 'PLANTEDazureSASsig%2Bxyz',
} as const;

const S = SERVER_ARGS_SECRETS;

/** Fields (and values) that look token- or key-ish but are not secrets: they must survive redaction as written. */
export const SERVER_ARGS_HARMLESS = [
  "model_path='/models/Qwen3-32B'",
  "tokenizer_mode='auto'",
  'tokenizer_worker_num=1',
  'skip_tokenizer_init=False',
  'max_total_tokens=447416',
  'chunked_prefill_size=8192',
  'max_prefill_tokens=16384',
  'ssl_keyfile=None',
  "tokenizer_metrics_custom_labels_header='x-custom-labels'",
  'bucket_time_to_first_token=[0.1, 0.25, 0.5, 1.0]',
  'speculative_num_draft_tokens=None',
  'speculative_token_map=None',
  'kt_max_deferred_experts_per_token=None',
  'ds_heavy_token_num=256',
  'num_reserved_decode_tokens=512',
  'piecewise_cuda_graph_max_tokens=8192',
  "served_model_name='Qwen/Qwen3-32B'",
  "disaggregation_transfer_backend='mooncake'",
  'disaggregation_bootstrap_port=8998',
  'random_seed=478665048',
];

/**
 * The start-up line of a decode server whose configuration holds every secret above. `full: false` leaves out a
 * few dozen harmless fields so the line stays under 4096 bytes: `journalctl -o json` (without --all, as the app
 * runs it) shows a longer MESSAGE as null, so only a line that short reaches the recorder through the journal.
 */
export function serverArgsLineWithSecrets({ full = true }: { full?: boolean } = {}): string {
  return (
    `[2026-11-29 16:46:30] server_args=ServerArgs(model_path='/models/Qwen3-32B', ` +
    `tokenizer_path='https://hf-mirror.internal/models/qwen3?token=${S.tokenizer_path_token}', tokenizer_mode='auto', ` +
    `tokenizer_worker_num=1, skip_tokenizer_init=False, load_format='remote', ` +
    `model_loader_extra_config='{"endpoint": "https://s3.internal:9000", "access_key_id": "${S.loader_access_key_id}", "secret_access_key": "${S.loader_secret_access_key}"}', ` +
    `trust_remote_code=False, context_length=None, is_embedding=False, enable_multimodal=None, revision=None, ` +
    `model_impl='auto', host='0.0.0.0', port=30200, fastapi_root_path='', grpc_mode=False, skip_server_warmup=False, ` +
    `warmups=None, nccl_port=None, ssl_keyfile=None, ssl_certfile='/etc/sglang/tls/cert.pem', ssl_ca_certs=None, ` +
    `ssl_keyfile_password='${S.ssl_keyfile_password}', enable_ssl_refresh=False, dtype='auto', quantization=None, ` +
    `kv_cache_dtype='auto', mem_fraction_static=0.88, max_running_requests=None, max_queued_requests=None, ` +
    `max_total_tokens=447416, chunked_prefill_size=8192, max_prefill_tokens=16384, schedule_policy='fcfs', ` +
    (full
      ? `schedule_conservativeness=1.0, page_size=1, device='cuda', tp_size=4, pp_size=1, stream_interval=1, ` +
        `watchdog_timeout=300, download_dir=None, base_gpu_id=4, gpu_id_step=1, ` +
        `log_level='info', log_level_http=None, log_requests=False, log_requests_level=2, crash_dump_folder=None, ` +
        `show_time_cost=False, enable_metrics_for_all_schedulers=False, `
      : '') +
    `random_seed=478665048, enable_metrics=True, ` +
    `tokenizer_metrics_custom_labels_header='x-custom-labels', tokenizer_metrics_allowed_custom_labels=None, ` +
    `extra_metric_labels=None, bucket_time_to_first_token=[0.1, 0.25, 0.5, 1.0], bucket_inter_token_latency=None, ` +
    `bucket_e2e_request_latency=None, collect_tokens_histogram=False, decode_log_interval=40, ` +
    `kv_events_config='{"publisher": "zmq", "endpoint": "tcp://events:${S.kv_events_url_password}@10.0.0.7:5557", "topic": "kv"}', ` +
    `enable_trace=True, otlp_traces_endpoint='https://otel:${S.otlp_url_password}@collector.internal:4318', ` +
    `export_metrics_to_file=False, api_key='${S.api_key}', admin_api_key='${S.admin_api_key}', ` +
    `served_model_name='Qwen/Qwen3-32B', weight_version='default', chat_template=None, completion_template=None, ` +
    `file_storage_path='sglang_storage', enable_cache_report=False, reasoning_parser=None, tool_call_parser=None, ` +
    `tool_server='https://mcp:${S.tool_server_url_password}@tools.internal/mcp,https://search.internal/mcp?access_token=${S.tool_server_token}', ` +
    `sampling_defaults='model', dp_size=1, load_balance_method='round_robin', dist_init_addr=None, nnodes=1, ` +
    `node_rank=0, json_model_override_args='{}', preferred_sampling_params=None, enable_lora=True, max_lora_rank=64, ` +
    `lora_target_modules=None, lora_paths=[LoRARef(lora_id='a1', lora_name='support', ` +
    `lora_path='https://ml:${S.lora_url_password}@artifacts.internal/lora/support', pinned=False), ` +
    `LoRARef(lora_id='a2', lora_name='sales', lora_path='https://blob.core.windows.net/lora/sales?sv=2024-05-04&sig=${S.lora_sas_sig}', pinned=False)], ` +
    `max_loras_per_batch=8, attention_backend='fa3', sampling_backend='flashinfer', grammar_backend='xgrammar', ` +
    `speculative_algorithm='EAGLE', speculative_draft_model_path='https://ml:${S.draft_model_url_password}@artifacts.internal/eagle', ` +
    `speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=None, speculative_token_map=None, ` +
    `ep_size=1, moe_a2a_backend='none', enable_hierarchical_cache=True, hicache_ratio=2.0, hicache_size=0, ` +
    `hicache_storage_backend='mooncake', hicache_storage_prefetch_policy='best_effort', ` +
    `hicache_storage_backend_extra_config='{"master_server_address": "10.0.0.9:50051", "password": "${S.hicache_password}", "secret_key": "${S.hicache_secret_key}"}', ` +
    `kt_max_deferred_experts_per_token=None, ds_heavy_token_num=256, disable_radix_cache=False, cuda_graph_max_bs=256, ` +
    `piecewise_cuda_graph_max_tokens=8192, disaggregation_mode='decode', disaggregation_transfer_backend='mooncake', ` +
    `disaggregation_bootstrap_port=8998, disaggregation_ib_device='mlx5_0', num_reserved_decode_tokens=512, ` +
    `encoder_urls=['http://enc:${S.encoder_url_password}@10.0.0.5:8000'], custom_weight_loader=[], ` +
    `remote_instance_weight_loader_seed_instance_ip=None, mm_process_config={}, decrypted_config_file=None, forward_hooks=None)`
  );
}
