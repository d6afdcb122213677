// Realistic systemctl output for discovery tests. Unit names are deliberately not "sglang-*".

export const LIST_UNITS_A = `cron.service                  loaded    active   running Regular background program processing daemon
dsv4-decode.service           loaded    active   running DSv4 decode
dsv4-prefill.service          loaded    active   running DSv4 prefill
● dsv4-old-decode.service     loaded    failed   failed  DSv4 decode (old)
ghost.service                 not-found inactive dead    ghost.service
nvidia-persistenced.service   loaded    active   running NVIDIA Persistence Daemon
pd-router.service             loaded    active   running PD router
ssh.service                   loaded    active   running OpenBSD Secure Shell server
`;

export const CAT_PREFILL_A = `# /etc/systemd/system/dsv4-prefill.service
[Unit]
Description=DSv4 prefill
After=network-online.target

[Service]
Type=simple
Environment=HF_HUB_OFFLINE=1 "CUDA_VISIBLE_DEVICES=0,1,2,3"
ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server --model-path /models/DeepSeek-V4 \\
  --served-model-name deepseek-v4 --tp-size 4 --host 127.0.0.1 --port=30100 \\
  # bootstrap port kept at the default
  --disaggregation-mode prefill --disaggregation-bootstrap-port 8998 \\
  --disaggregation-ib-device mlx5_0 --enable-metrics
Restart=on-failure

[Install]
WantedBy=multi-user.target
`;

// Metrics disabled, and a drop-in that replaces ExecStart (the empty ExecStart= resets the list).
export const CAT_DECODE_A = `# /etc/systemd/system/dsv4-decode.service
[Unit]
Description=DSv4 decode

[Service]
ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server --model-path /models/DeepSeek-V4 --port 30999
Restart=on-failure

# /etc/systemd/system/dsv4-decode.service.d/override.conf
[Service]
ExecStart=
ExecStart=/opt/sglang/venv/bin/python -m sglang.launch_server \\
    --model-path /models/DeepSeek-V4 --served-model-name deepseek-v4 \\
    --tp 4 --base-gpu-id 4 --host 0.0.0.0 --port 30200 \\
    --disaggregation-mode decode --disaggregation-ib-device mlx5_0
Environment="SGLANG_DISAGGREGATION_WAITING_TIMEOUT=600"
`;

// An old, failed decode unit that still claims the decode role on another port.
export const CAT_OLD_DECODE_A = `# /etc/systemd/system/dsv4-old-decode.service
[Service]
ExecStart=/opt/sglang-old/venv/bin/python3 -m sglang.launch_server --model-path /models/DeepSeek-V3 --disaggregation-mode decode --port 30300 --enable-metrics --base-gpu-id 4 --tp-size 4
`;

// Old router (sglang-router ≤ 0.2.4), python -m form.
export const CAT_ROUTER_A = `# /etc/systemd/system/pd-router.service
[Unit]
After=dsv4-prefill.service dsv4-decode.service

[Service]
ExecStart=/opt/sglang/venv/bin/python -m sglang_router.launch_router --pd-disaggregation \\
  --prefill http://127.0.0.1:30100 8998 --decode http://127.0.0.1:30200 \\
  --host 0.0.0.0 --port 30001 --prometheus-host 127.0.0.1 --prometheus-port 29001
Restart=on-failure
`;

export const CAT_SSH = `# /lib/systemd/system/ssh.service
[Unit]
Description=OpenBSD Secure Shell server

[Service]
EnvironmentFile=-/etc/default/ssh
ExecStartPre=/usr/sbin/sshd -t
ExecStart=/usr/sbin/sshd -D $SSHD_OPTS
ExecReload=/bin/kill -HUP $MAINPID
`;

export const CAT_NVIDIA = `# /lib/systemd/system/nvidia-persistenced.service
[Service]
Type=forking
ExecStart=/usr/bin/nvidia-persistenced --user nvidia-persistenced --no-persistence-mode --verbose
`;

// Template units: role from the instance name, port from a per-instance EnvironmentFile.
export const CAT_LLM_TEMPLATE = (instance: string) =>
  `# /etc/systemd/system/llm@.service
[Unit]
Description=LLM %i server

[Service]
EnvironmentFile=/etc/llm/%i.env
ExecStart=/srv/llm/.venv/bin/python -m sglang.launch_server --model-path /models/Qwen3-32B \\
  --disaggregation-mode %i --port \${PORT} --base-gpu-id $BASE_GPU --tp-size 4 --enable-metrics
`.replace('%i server', `${instance} server`);

export const LLM_ENV = {
  '/etc/llm/prefill.env': 'PORT=30100\nBASE_GPU=0\n',
  '/etc/llm/decode.env': '# decode on the upper four GPUs\nPORT=30200\nBASE_GPU=4\n',
};

// smg binary, default Prometheus port, a --decode URL that points at the wrong port.
export const CAT_SMG_ROUTER = `# /etc/systemd/system/gateway.service
[Service]
ExecStart=/usr/local/bin/smg --pd-disaggregation --prefill http://127.0.0.1:30100 --decode http://127.0.0.1:30201 --host 0.0.0.0 --port 30001
`;

// `systemctl show --property=Id,ActiveState,ExecStart,Environment,EnvironmentFiles,FragmentPath,NeedDaemonReload …`
// As systemd 252 prints them (checked against the real one in test/real-systemd): argv[] joined with plain
// spaces, never quoted — readable for what a unit mentions, never splittable into words.
export const SHOW_BATCH_C = `Id=infer-p.service
ActiveState=active
ExecStart={ path=/bin/bash ; argv[]=/bin/bash -lc source /opt/venv/bin/activate && export CUDA_VISIBLE_DEVICES=0,1 && python -m sglang.launch_server --model-path /m --tp 2 --port 31100 --host 0.0.0.0 --disaggregation-mode prefill --enable-metrics ; ignore_errors=no ; start_time=[Mon 2026-11-30 09:00:01 UTC] ; stop_time=[n/a] ; pid=4242 ; code=(null) ; status=0/0 }
Environment=
EnvironmentFiles=
FragmentPath=/etc/systemd/system/infer-p.service
NeedDaemonReload=no
MainPID=4242

Id=infer-d.service
ActiveState=active
ExecStart={ path=/usr/bin/env ; argv[]=/usr/bin/env CUDA_VISIBLE_DEVICES=2,3 /opt/venv/bin/python3 -m sglang.launch_server --model-path /m --tp 2 --port 31200 --host 0.0.0.0 --disaggregation-mode decode --enable-metrics ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=4243 ; code=(null) ; status=0/0 }
Environment=HF_HOME=/data/hf
EnvironmentFiles=
FragmentPath=/etc/systemd/system/infer-d.service
NeedDaemonReload=yes
MainPID=4243

Id=infer-gw.service
ActiveState=activating
ExecStart={ path=/opt/venv/bin/python ; argv[]=/opt/venv/bin/python -m smg.launch_router --pd-disaggregation --prefill=http://localhost:31100 --decode http://127.0.0.1:31200 --port 31001 --prometheus-port 29100 ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=0 ; code=(null) ; status=0/0 }
Environment=
EnvironmentFiles=
FragmentPath=/etc/systemd/system/infer-gw.service
NeedDaemonReload=no
MainPID=0

Id=cron.service
ActiveState=active
ExecStart={ path=/usr/sbin/cron ; argv[]=/usr/sbin/cron -f $EXTRA_OPTS ; ignore_errors=no ; start_time=[n/a] ; stop_time=[n/a] ; pid=812 ; code=(null) ; status=0/0 }
Environment=
EnvironmentFiles=/etc/default/cron (ignore_errors=yes)
FragmentPath=/lib/systemd/system/cron.service
NeedDaemonReload=no
MainPID=812
`;

/** What the kernel says the units of SHOW_BATCH_C run: a shell that did not exec its python, and env's exec. */
export const PROCESSES_C: Record<string, Array<{ pid: number; argv: string[] }>> = {
  'infer-p.service': [
    {
      pid: 4242,
      argv: [
        '/bin/bash',
        '-lc',
        'source /opt/venv/bin/activate && export CUDA_VISIBLE_DEVICES=0,1 && python -m sglang.launch_server --model-path /m --tp 2 --port 31100 --host 0.0.0.0 --disaggregation-mode prefill --enable-metrics',
      ],
    },
    {
      pid: 4250,
      argv: [
        'python',
        '-m',
        'sglang.launch_server',
        '--model-path',
        '/m',
        '--tp',
        '2',
        '--port',
        '31100',
        '--host',
        '0.0.0.0',
        '--disaggregation-mode',
        'prefill',
        '--enable-metrics',
      ],
    },
  ],
  'infer-d.service': [
    {
      pid: 4243,
      argv: [
        '/opt/venv/bin/python3',
        '-m',
        'sglang.launch_server',
        '--model-path',
        '/m',
        '--tp',
        '2',
        '--port',
        '31200',
        '--host',
        '0.0.0.0',
        '--disaggregation-mode',
        'decode',
        '--enable-metrics',
      ],
    },
  ],
};

/** The unit files of SHOW_BATCH_C as `systemctl cat` prints them (systemd.syntax quoting). */
export const CATS_C: Record<string, string> = {
  'infer-d.service':
    '# /etc/systemd/system/infer-d.service\n[Service]\nEnvironment=HF_HOME=/data/hf\nExecStart=/usr/bin/env CUDA_VISIBLE_DEVICES=2,3 /opt/venv/bin/python3 -m sglang.launch_server --model-path /m --tp 2 --port 31200 --host 0.0.0.0 --disaggregation-mode decode --enable-metrics\n',
  'infer-gw.service':
    '# /etc/systemd/system/infer-gw.service\n[Service]\nExecStart=/opt/venv/bin/python -m smg.launch_router --pd-disaggregation --prefill=http://localhost:31100 --decode http://127.0.0.1:31200 --port 31001 --prometheus-port 29100\n',
};
