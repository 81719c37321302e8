import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { OPERATOR_TOKEN } from "./api-harness.ts";

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "../..");

export interface MailctlResult {
  readonly stdout: string;
  readonly stderr: string;
  readonly code: number;
}

/**
 * The real command line (`node src/cli/mailctl.ts ...`) against a running
 * service's operator listener, as an operator runs it: its JSON on stdout,
 * its errors on stderr, its exit code.
 */
export function mailctlAgainst(operatorUrl: () => string) {
  async function mailctl(args: readonly string[], token: string = OPERATOR_TOKEN): Promise<MailctlResult> {
    try {
      const { stdout, stderr } = await run(process.execPath, ["--disable-warning=ExperimentalWarning", "src/cli/mailctl.ts", ...args], {
        cwd: ROOT,
        env: { ...process.env, OPERATOR_TOKEN: token, MAIL_ADMIN_URL: operatorUrl() },
      });
      return { stdout, stderr, code: 0 };
    } catch (error) {
      const failed = error as MailctlResult;
      return { stdout: failed.stdout, stderr: failed.stderr, code: failed.code };
    }
  }
  return {
    mailctl,
    /** Runs a command that must succeed; its JSON answer. */
    async ok<T>(args: readonly string[]): Promise<T> {
      const result = await mailctl(args);
      expect(result.code, `mailctl ${args.join(" ")}: ${result.stderr}`).toBe(0);
      return JSON.parse(result.stdout) as T;
    },
    /** Runs a command that must fail with exit code 1; the contract error code it printed. */
    async errorCode(args: readonly string[]): Promise<string> {
      const result = await mailctl(args);
      expect(result.code, `mailctl ${args.join(" ")}`).toBe(1);
      return (JSON.parse(result.stderr) as { error: { code: string } }).error.code;
    },
  };
}
