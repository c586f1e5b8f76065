// What a custom code module exports, as the sandbox reports it when the module loads: its methods (name and URL
// parameters), its hooks per schema and its jobs. Stored with the bundle (code-store.ts) and used to route calls,
// run hooks on writes and schedule jobs.

export interface MethodInfo {
  name: string;
  params: string[];
}

/** The hooks a module may export per schema (the signup pair fires on user schemas only). */
export const HOOK_EVENTS = [
  "beforeCreate",
  "afterCreate",
  "beforeUpdate",
  "afterUpdate",
  "beforeDelete",
  "afterDelete",
  "beforeSignup",
  "afterSignup",
] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** A scheduled job as the module declares it (its schedule is checked by the host, which knows cron). */
export interface JobInfo {
  name: string;
  schedule: string;
  timeoutMs?: number;
}

/** What a loaded module exports: its methods, its hooks (schema -> events) and its jobs. */
export interface BundleInfo {
  methods: MethodInfo[];
  hooks: Record<string, HookEvent[]>;
  jobs: JobInfo[];
}
