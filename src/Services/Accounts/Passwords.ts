/** Password hashing with scrypt from node:crypto (memory-hard, no native addon to build). */
import { Effect } from "effect"
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from "node:crypto"

const params = { N: 16384, r: 8, p: 1, keyLength: 64 } as const

const derive = (password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, keyLength, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      resume(error ? Effect.die(error) : Effect.succeed(key))
    )
  })

/** `scrypt$N$r$p$salt$key`, base64 parts: the parameters travel with the hash. */
export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, params.N, params.r, params.p, params.keyLength)
    return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), key.toString("base64")].join("$")
  })

export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const [scheme, N, r, p, salt, key] = stored.split("$")
    if (scheme !== "scrypt" || !N || !r || !p || !salt || !key) return false
    const expected = Buffer.from(key, "base64")
    const actual = yield* derive(password, Buffer.from(salt, "base64"), Number(N), Number(r), Number(p), expected.length)
    return timingSafeEqual(actual, expected)
  })

/** A hash of nothing anyone knows: compared against when the email is unknown, so timing tells nothing. */
export const dummyHash: string = (() => {
  const salt = randomBytes(16)
  const key = scryptSync(randomBytes(16).toString("hex"), salt, params.keyLength, { N: params.N, r: params.r, p: params.p })
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), key.toString("base64")].join("$")
})()
