// The contract between the push queue and a delivery service (APNs, FCM, Web Push): one message to one device
// token in, one classified result out. Providers never throw for a delivery; they classify every outcome so
// the queue knows whether to retry, drop the token, or record a permanent failure.

export type PushPlatform = "ios" | "android" | "web";

/** One delivery: a device token and the payload already shaped for its platform. */
export interface PushMessage {
  /** The delivery's id (32 hex). Providers use it as the request id and collapse id, so a delivery resent after
   * a crash replaces the first on the device instead of showing twice (apns-id/apns-collapse-id, FCM
   * collapse key, Web Push Topic). */
  id: string;
  /** The device token: APNs hex token, FCM registration token, or a Web Push subscription as JSON text. */
  token: string;
  /**
   * The payload for the platform: for iOS the full APNs JSON (`{"aps": {...}, ...custom}`); for Android a flat
   * map of strings (FCM `data`); for the web the JSON object the service worker receives.
   */
  payload: Record<string, unknown>;
  /** Do not start the send after this time (ms since the epoch; the row's lease is about to run out): answer
   * `not-sent` instead. */
  notAfter?: number;
}

export type DeliveryResult =
  /** The provider accepted the message. */
  | { kind: "sent" }
  /** Try again later: 429, 5xx, timeouts, connection failures. `afterMs` from Retry-After when given. */
  | { kind: "retry"; reason: string; afterMs?: number }
  /** The token is dead (APNs Unregistered/BadDeviceToken/DeviceTokenNotForTopic, FCM UNREGISTERED or an invalid
   * registration token, Web Push 404/410): the queue removes it and lists it as expired. */
  | { kind: "invalid-token"; reason: string }
  /** A permanent failure that is not the token's fault (payload rejected, credentials refused): not retried. */
  | { kind: "failed"; reason: string }
  /** The send was never made (it waited its turn past `notAfter`): the queue puts it back as it was. */
  | { kind: "not-sent" };

export interface PushProvider {
  readonly platform: PushPlatform;
  /** Deliver one message; never rejects (every outcome is a DeliveryResult). */
  send(message: PushMessage): Promise<DeliveryResult>;
  /** Release connections and timers. */
  close(): void;
}
