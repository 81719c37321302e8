/** A command line the command cannot run: mailctl prints the message and its usage, and exits 2. */
export class UsageError extends Error {}
