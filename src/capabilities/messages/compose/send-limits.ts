/** The limits of the spec's Limits table that concern a send request. */
export const SEND_LIMITS = {
  recipientName: 120,
  subject: 500,
  html: 400_000,
  text: 100_000,
  /**
   * Our bound on one template variable (the spec sets none besides the
   * body size): ample for names, addresses and order lines, and with the
   * limits of the rendered parts (template.ts) it keeps a send from growing
   * a message out of its variables.
   */
  variableValue: 10_000,
  tagKey: 40,
  tagValue: 120,
} as const;
