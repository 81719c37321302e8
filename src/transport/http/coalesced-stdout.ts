/**
 * Standard output for the request logs, one write per turn of the event
 * loop instead of one per line. Pino's default destination writes every
 * line synchronously: at `info`, two lines per request, which under load
 * were about a tenth of the API process's CPU (one system call each). Here
 * the lines of one turn are joined and written together on the next
 * (setImmediate): at low traffic a line still leaves at once, under load
 * the writes are fewer and larger. Lines still pending when the process
 * exits are written synchronously on the way out.
 */
export interface LineSink {
  write(line: string): void;
}

let pending: string[] = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const lines = pending.join("");
  pending = [];
  process.stdout.write(lines);
}

let exitHooked = false;

/** The process's one coalescing sink on standard output (every listener's logger shares it). */
export function coalescedStdout(): LineSink {
  if (!exitHooked) {
    exitHooked = true;
    process.once("exit", flush);
  }
  return {
    write(line: string) {
      pending.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
}
