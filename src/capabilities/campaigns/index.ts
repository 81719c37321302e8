export * from "./campaigns.ts";
export * from "./campaign-sending.ts";
export * from "./content.ts";
export type * from "./ports.ts";
