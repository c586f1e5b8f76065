// Device tokens for push (docs/api/push.md): browser Web Push through a service worker registration, and any
// other token type (ios, androidgcm) by its string.

import type { Client } from "./client.ts";

export function push(c: Client) {
  const tokenPath = (type: string, token: string) => `/_push/tokens/${encodeURIComponent(type)}/${encodeURIComponent(token)}`;
  const userOf = async (user?: string) => user ?? (await c.currentToken())?.user;
  const register = async (type: string, token: string, user?: string) => {
    const u = await userOf(user);
    await c.call("POST", tokenPath(type, token), u ? { body: { user: u } } : {});
  };
  return {
    register,
    unregister: async (type: string, token: string) => void (await c.call("DELETE", tokenPath(type, token))),
    /**
     * Subscribe this browser with the service worker's PushManager (reusing a subscription it has) and register it,
     * linked to `user` (default: the signed-in user). `vapidPublicKey` is the setting push.web.vapidPublicKey.
     */
    subscribeWebPush: async (registration: ServiceWorkerRegistration, o: { vapidPublicKey?: string; user?: string } = {}) => {
      const pm = registration.pushManager;
      const sub =
        (await pm.getSubscription()) ?? (await pm.subscribe({ userVisibleOnly: true, applicationServerKey: o.vapidPublicKey ?? null }));
      await register("web", JSON.stringify(sub), o.user);
      return sub;
    },
  };
}
