import { spawn } from 'node:child_process';

/** What a finished command left: its exit code and both streams, whole. */
export interface RunResult {
  command: string;
  cwd: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run `command` with `args` in `cwd` (no shell), collecting its output.
 * Never rejects for a non-zero exit: see {@link failureReport} and {@link mustSucceed}.
 * @param options.env variables added to this process's environment.
 */
export function run(
  command: string,
  args: readonly string[],
  cwd: string,
  options: { env?: Record<string, string> } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ command: [command, ...args].join(' '), cwd, code, stdout, stderr }),
    );
  });
}

/** At most the last `max` characters of `text`, marked when cut. */
function tail(text: string, max = 6000): string {
  const t = text.trimEnd();
  return t.length <= max ? t : `…(${t.length - max} characters cut)\n${t.slice(-max)}`;
}

/** A readable account of a failed command: what ran, where, its exit code and output. */
export function failureReport(what: string, r: RunResult): string {
  return [
    `${what} failed (exit ${r.code})`,
    `  command: ${r.command}`,
    `  in:      ${r.cwd}`,
    r.stdout.trim() ? `--- stdout ---\n${tail(r.stdout)}` : '',
    r.stderr.trim() ? `--- stderr ---\n${tail(r.stderr)}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Run a command that must exit 0.
 * @throws {Error} with {@link failureReport} as its message otherwise.
 */
export async function mustSucceed(
  what: string,
  command: string,
  args: readonly string[],
  cwd: string,
  options: { env?: Record<string, string> } = {},
): Promise<RunResult> {
  const r = await run(command, args, cwd, options);
  if (r.code !== 0) throw new Error(failureReport(what, r));
  return r;
}
