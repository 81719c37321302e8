import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import type { StoreOrder, StoreOrderInput } from "./types.ts";

/** WooCommerce statuses of an order whose payment went through. */
const PAID_STATUSES: ReadonlySet<string> = new Set(["processing", "completed"]);

/**
 * Whether an order is paid: WooCommerce sets `date_paid` when the payment
 * completes, and a `processing` or `completed` order is paid too (some
 * gateways leave `date_paid` empty).
 */
export function isPaid(order: StoreOrder): boolean {
  return order.datePaid !== null || PAID_STATUSES.has(order.status);
}

const DECIMAL = /^-?\d{1,13}(\.\d{1,4})?$/;
const MAX_LINE_ITEMS = 500;

/** Checks an order and names every bad field (400 VALIDATION_ERROR); field names as the plugin writes them. */
export function validateOrder(input: StoreOrderInput): StoreOrder {
  const problems: FieldProblem[] = [];
  const problem = (field: string, text: string): void => {
    problems.push({ field, problem: text });
  };
  if (!/^[1-9]\d{0,18}$/.test(input.id)) problem("order.id", "must be a positive integer");
  const status = input.status.trim().toLowerCase();
  if (!/^[a-z0-9_-]{1,40}$/.test(status)) problem("order.status", "must be a WooCommerce order status, e.g. processing");
  const currency = input.currency.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) problem("order.currency", "must be an ISO 4217 code, e.g. EUR");
  const total = input.total.trim();
  if (!DECIMAL.test(total)) problem("order.total", "must be a decimal string, e.g. 42.00");
  if (input.lineItems.length > MAX_LINE_ITEMS) problem("order.line_items", `must hold at most ${MAX_LINE_ITEMS} items`);
  input.lineItems.forEach((item, index) => {
    if (!DECIMAL.test(item.total.trim())) problem(`order.line_items[${index}].total`, "must be a decimal string");
    if (!Number.isInteger(item.quantity) || item.quantity < 0) problem(`order.line_items[${index}].quantity`, "must be a whole number, 0 or more");
  });
  const date = (value: string, field: string): string | null => {
    const trimmed = value.trim();
    if (trimmed === "") return null;
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(trimmed) || Number.isNaN(Date.parse(trimmed))) problem(field, "must be an ISO 8601 date-time");
    return trimmed;
  };
  const dateCreated = date(input.dateCreated, "order.date_created");
  const datePaid = date(input.datePaid, "order.date_paid");
  if (problems.length > 0) throw new ValidationError(problems);

  const billing = input.billing;
  return {
    id: input.id,
    status,
    currency,
    total,
    lineItems: input.lineItems.map((item) => ({ name: item.name.trim(), quantity: item.quantity, total: item.total.trim(), sku: item.sku.trim() })),
    billing:
      billing && (billing.email.trim() !== "" || billing.firstName.trim() !== "" || billing.lastName.trim() !== "")
        ? { email: billing.email.trim(), firstName: billing.firstName.trim(), lastName: billing.lastName.trim() }
        : null,
    dateCreated,
    datePaid,
  };
}

/** What a push does to the stored order, decided with the stored one locked. */
export interface OrderDecision {
  readonly created: boolean;
  readonly changed: boolean;
  /** The order became paid with this push (it was not, or was not seen, before). */
  readonly becamePaid: boolean;
  readonly paid: boolean;
}

/** `previous`: the stored order, undefined the first time. Equal orders (same JSON) are no change. */
export function decideOrder(previous: StoreOrder | undefined, incoming: StoreOrder): OrderDecision {
  const paid = isPaid(incoming);
  if (previous === undefined) return { created: true, changed: true, becamePaid: paid, paid };
  const changed = JSON.stringify(canonicalOrder(previous)) !== JSON.stringify(canonicalOrder(incoming));
  return { created: false, changed, becamePaid: paid && !isPaid(previous), paid };
}

/**
 * The order with its keys in one fixed order: a stored order comes back
 * from jsonb with its keys reordered, and must still compare equal to the
 * same order pushed again.
 */
export function canonicalOrder(order: StoreOrder): StoreOrder {
  return {
    id: order.id,
    status: order.status,
    currency: order.currency,
    total: order.total,
    lineItems: order.lineItems.map((item) => ({ name: item.name, quantity: item.quantity, total: item.total, sku: item.sku })),
    billing: order.billing ? { email: order.billing.email, firstName: order.billing.firstName, lastName: order.billing.lastName } : null,
    dateCreated: order.dateCreated,
    datePaid: order.datePaid,
  };
}
