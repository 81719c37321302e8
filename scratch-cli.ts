import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { startApp } from "./src/app.ts";
import { createTestDatabase } from "./test/support/test-database.ts";
import { testConfig, OPERATOR_TOKEN } from "./test/support/api-harness.ts";
const db = await createTestDatabase();
const app = await startApp({ config: testConfig(), databaseUrl: db.url, logger: false });
const run = (...args: string[]): string => {
  try {
    return execFileSync(process.execPath, ["--disable-warning=ExperimentalWarning", "src/cli/mailctl.ts", ...args], {
      env: { ...process.env, OPERATOR_TOKEN, MAIL_ADMIN_URL: app.httpUrl },
      encoding: "utf8",
    });
  } catch (e) {
    const err = e as { stderr: string; status: number };
    return `EXIT ${err.status}: ${err.stderr}`;
  }
};
try {
  const company = JSON.parse(run("company", "create", "--name", "CLI Co")).company.id as string;
  console.log(run("domain", "create", "--company", company, "--domain", "cli.example").slice(0, 400));
  console.log(run("domain", "verify", "--company", company, "--domain", "cli.example", "--override").slice(0, 300));
  console.log(run("domain", "verify", "--company", company, "--domain", "nope.example"));
  console.log(run("domain", "list", "--company", company).length > 0);
  console.log(run("sender", "create", "--company", company, "--email", "hi@cli.example", "--name", "Hi"));
  const sender = JSON.parse(run("sender", "create", "--company", company, "--email", "b@cli.example")).sender.id as string;
  console.log(run("sender", "default", "--company", company, "--sender", sender));
  console.log(run("sender", "list", "--company", company));
  writeFileSync("/tmp/scratch/t.html", "<p>Hi {{ name }}</p>");
  writeFileSync("/tmp/scratch/t.txt", "Hi {{ name }}");
  console.log(run("template", "put", "--company", company, "--name", "welcome", "--subject", "Hello", "--html-file", "/tmp/scratch/t.html", "--text-file", "/tmp/scratch/t.txt"));
  console.log(run("template", "list", "--company", company).length > 0);
  console.log(run("credits", "add", "--company", company, "--amount", "10", "--note", "grant"));
  console.log(run("credits", "add", "--company", company, "--amount=-3", "--note", "fix"));
  console.log(run("credits", "add", "--company", company, "--amount", "-3", "--note", "fix"));
  console.log(run("credits", "add", "--company", company, "--amount=-30", "--note", "fix"));
  console.log(run("credits", "show", "--company", company));
  await app.suppressions.suppress(company, "x@y.example", "bounce");
  console.log(run("suppression", "list", "--company", company));
  console.log(run("suppression", "remove", "--company", company, "--email", "X@y.example"));
} finally {
  await app.close();
  await db.drop();
}
