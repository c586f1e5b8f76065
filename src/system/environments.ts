// The two environments. Development is API version 0; production serves deployed versions 1, 2, ...

export const ENVIRONMENTS = ["development", "production"] as const;
export type EnvName = (typeof ENVIRONMENTS)[number];

export function isEnvName(s: string): s is EnvName {
  return s === "development" || s === "production";
}
