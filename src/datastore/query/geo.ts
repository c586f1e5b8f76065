// Geo queries: parsing of [near]/[within] values, the great-circle (haversine) distance in radians as SQL,
// and the latitude/longitude boxes that bound a spherical cap (used against the R*Tree). Pure.

import { badRequest } from "../../errors.ts";

export const EARTH_RADIUS_KM = 6367.5;

type GeoArg =
  | { kind: "near"; lat: number; lon: number; radius: number | null }
  | { kind: "cap"; lat: number; lon: number; radius: number }
  | { kind: "box"; lat1: number; lon1: number; lat2: number; lon2: number };

/** A latitude/longitude rectangle; lon1 > lon2 never happens here (crossing boxes are split in two). */
export interface Rect {
  lat1: number;
  lat2: number;
  lon1: number;
  lon2: number;
}

function num(s: string, what: string): number {
  if (!/^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/.test(s))
    throw badRequest(`${what} must be a number, not ${JSON.stringify(s.slice(0, 40))}`);
  return Number(s);
}

function checkLat(v: number): number {
  if (!(v >= -90 && v <= 90)) throw badRequest("Latitude value must be between -90 and 90 inclusive.");
  return v;
}

function checkLon(v: number): number {
  if (!(v >= -180 && v < 180)) throw badRequest("Longitude value must be between -180 inclusive and 180 exclusive.");
  return v;
}

function checkRadius(v: number): number {
  if (!(v >= 0) || !Number.isFinite(v)) throw badRequest("the radius (radians) must be a non-negative number");
  return v;
}

/** Parse `lat,lon[,radius]` (near), `lat,lon,radius` (within) or `lat1,lon1,lat2,lon2` (within box). */
export function parseGeo(op: "near" | "within", field: string, value: string): GeoArg {
  const parts = value.split(",");
  const n = (i: number, what: string) => num(parts[i]!, `${field}[${op}]: ${what}`);
  if (op === "near") {
    if (parts.length !== 2 && parts.length !== 3) throw badRequest(`${field}[near] takes <lat>,<lon> or <lat>,<lon>,<radius in radians>`);
    return {
      kind: "near",
      lat: checkLat(n(0, "latitude")),
      lon: checkLon(n(1, "longitude")),
      radius: parts.length === 3 ? checkRadius(n(2, "radius")) : null,
    };
  }
  if (parts.length === 3)
    return { kind: "cap", lat: checkLat(n(0, "latitude")), lon: checkLon(n(1, "longitude")), radius: checkRadius(n(2, "radius")) };
  if (parts.length === 4) {
    const box = {
      lat1: checkLat(n(0, "latitude")),
      lon1: checkLon(n(1, "longitude")),
      lat2: checkLat(n(2, "latitude")),
      lon2: checkLon(n(3, "longitude")),
    };
    if (box.lat1 > box.lat2)
      throw badRequest(`${field}[within]: the first corner is the lower left, so its latitude cannot be above the second's`);
    return { kind: "box", ...box };
  }
  throw badRequest(`${field}[within] takes <lat>,<lon>,<radius in radians> or <lat1>,<lon1>,<lat2>,<lon2> (lower left, upper right)`);
}

const RAD = Math.PI / 180;
const DEG = 180 / Math.PI;

/** Haversine distance in radians between two points in degrees (the reference the SQL mirrors). */
export function haversine(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const p1 = lat1 * RAD;
  const p2 = lat2 * RAD;
  const a = Math.sin((p2 - p1) / 2) ** 2 + Math.cos(p1) * Math.cos(p2) * Math.sin(((lon2 - lon1) * RAD) / 2) ** 2;
  return 2 * Math.asin(Math.min(1, Math.sqrt(a)));
}

/**
 * SQL for the haversine distance (radians) from the point bound as (lat, lon, cos(lat)) in radians to the
 * columns latCol/lonCol (degrees). Three arguments, in order.
 */
export function distanceSql(latCol: string, lonCol: string): { sql: string; args: (p: { lat: number; lon: number }) => number[] } {
  const sql = `(2 * asin(min(1.0, sqrt(power(sin((radians(${latCol}) - ?) / 2), 2) + cos(radians(${latCol})) * ? * power(sin((radians(${lonCol}) - ?) / 2), 2)))))`;
  return { sql, args: (p) => [p.lat * RAD, Math.cos(p.lat * RAD), p.lon * RAD] };
}

/** The rectangles (one, or two across the antimeridian) that contain every point within `radius` of a point. */
export function capRects(lat: number, lon: number, radius: number): Rect[] {
  const r = radius * DEG;
  const latMin = lat - r;
  const latMax = lat + r;
  if (latMin <= -90 || latMax >= 90 || radius >= Math.PI / 2)
    return [{ lat1: Math.max(-90, latMin), lat2: Math.min(90, latMax), lon1: -180, lon2: 180 }];
  const dLon = Math.asin(Math.min(1, Math.sin(radius) / Math.cos(lat * RAD))) * DEG;
  return lonRects(Math.max(-90, latMin), Math.min(90, latMax), lon - dLon, lon + dLon);
}

/** A box from the lower-left to the upper-right corner; lon1 > lon2 means it crosses the antimeridian. */
export function boxRects(b: { lat1: number; lon1: number; lat2: number; lon2: number }): Rect[] {
  if (b.lon1 <= b.lon2) return [{ lat1: b.lat1, lat2: b.lat2, lon1: b.lon1, lon2: b.lon2 }];
  return [
    { lat1: b.lat1, lat2: b.lat2, lon1: b.lon1, lon2: 180 },
    { lat1: b.lat1, lat2: b.lat2, lon1: -180, lon2: b.lon2 },
  ];
}

function lonRects(lat1: number, lat2: number, lonMin: number, lonMax: number): Rect[] {
  if (lonMax - lonMin >= 360) return [{ lat1, lat2, lon1: -180, lon2: 180 }];
  if (lonMin < -180)
    return [
      { lat1, lat2, lon1: lonMin + 360, lon2: 180 },
      { lat1, lat2, lon1: -180, lon2: lonMax },
    ];
  if (lonMax >= 180)
    return [
      { lat1, lat2, lon1: lonMin, lon2: 180 },
      { lat1, lat2, lon1: -180, lon2: lonMax - 360 },
    ];
  return [{ lat1, lat2, lon1: lonMin, lon2: lonMax }];
}
