import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "effect/FastCheck"
import * as Decomposition from "../src/Decomposition.js"

describe("Decomposition", () => {
  it("splits a sum's change into each value's change, the values that drove it first", () => {
    const breakdown = Decomposition.sum("region", [
      { value: "Europe", before: 500, after: 300 },
      { value: "Asia Pacific", before: 200, after: 230 },
      { value: "North America", before: 300, after: 250 },
      // Only in the second period: it counts zero in the first.
      { value: "Latin America", before: null, after: 20 }
    ])
    expect(breakdown).toMatchObject({ kind: "sum", before: 1000, after: 800, change: -200, relative: -0.2 })
    expect(breakdown.parts.map((p) => [p.value, p.change, p.share])).toEqual([
      ["Europe", -200, 1],
      ["North America", -50, 0.25],
      ["Latin America", 20, -0.1],
      ["Asia Pacific", 30, -0.15]
    ])
  })

  it("adds up rows of one value, and says no share when nothing changed", () => {
    const breakdown = Decomposition.sum("channel", [
      { value: "web", before: 10, after: null },
      { value: "web", before: null, after: 10 }
    ])
    expect(breakdown).toMatchObject({ change: 0, parts: [{ value: "web", before: 10, after: 10, change: 0 }] })
    expect(breakdown.parts[0]).not.toHaveProperty("share")
  })

  it("splits a ratio's change into rate and mix, worked by hand", () => {
    // Revenue per order: web 100/10 → 150/10 (its rate rose), store 100/5 → 100/15 (its weight rose,
    // its rate fell).
    const breakdown = Decomposition.ratio("channel", [
      { value: "web", before: { numerator: 100, denominator: 10 }, after: { numerator: 150, denominator: 10 } },
      { value: "store", before: { numerator: 100, denominator: 5 }, after: { numerator: 100, denominator: 15 } }
    ])
    expect(breakdown.before).toBeCloseTo(200 / 15, 12)
    expect(breakdown.after).toBeCloseTo(250 / 25, 12)
    const web = breakdown.parts.find((p) => p.value === "web")!
    const store = breakdown.parts.find((p) => p.value === "store")!
    // web: weights 10/15 → 10/25, ratio 10 → 15.
    expect(web.rate).toBeCloseTo(((10 / 15 + 10 / 25) / 2) * 5, 12)
    expect(web.mix).toBeCloseTo((10 / 25 - 10 / 15) * 12.5, 12)
    // store: weights 5/15 → 15/25, ratio 20 → 6.67.
    expect(store.rate).toBeCloseTo(((5 / 15 + 15 / 25) / 2) * (100 / 15 - 20), 12)
    expect(store.mix).toBeCloseTo((15 / 25 - 5 / 15) * ((20 + 100 / 15) / 2), 12)
    expect(web.change + store.change).toBeCloseTo(breakdown.change, 12)
  })

  it("a value that came or went in a ratio is all mix", () => {
    const breakdown = Decomposition.ratio("channel", [
      { value: "web", before: { numerator: 50, denominator: 5 }, after: { numerator: 50, denominator: 5 } },
      { value: "partner", before: { numerator: 0, denominator: 0 }, after: { numerator: 100, denominator: 5 } }
    ])
    const partner = breakdown.parts.find((p) => p.value === "partner")!
    expect(partner.rate).toBe(0)
    expect(partner.mix).toBeCloseTo(0.5 * 20, 12)
    expect(breakdown.parts.reduce((t, p) => t + p.change, 0)).toBeCloseTo(breakdown.change, 12)
  })

  const amount = FastCheck.double({ min: 0, max: 1e6, noNaN: true })
  const count = FastCheck.integer({ min: 0, max: 10_000 })
  const values = FastCheck.uniqueArray(FastCheck.string({ minLength: 1, maxLength: 4 }), {
    minLength: 1,
    maxLength: 12
  })

  it.prop("a sum's parts add up to its change", [
    values,
    FastCheck.array(FastCheck.tuple(amount, amount), { minLength: 12, maxLength: 12 })
  ], ([names, figures]) => {
    const breakdown = Decomposition.sum(
      "d",
      names.map((value, i) => ({ value, before: figures[i]![0], after: figures[i]![1] }))
    )
    const parts = breakdown.parts.reduce((t, p) => t + p.change, 0)
    expect(Math.abs(parts - breakdown.change)).toBeLessThanOrEqual(
      1e-9 * Math.max(1, Math.abs(breakdown.before) + Math.abs(breakdown.after))
    )
  })

  it.prop(
    "a ratio's rate and mix add up to each part, and the parts to its change",
    [values, FastCheck.array(FastCheck.tuple(amount, count, amount, count), { minLength: 12, maxLength: 12 })],
    ([names, figures]) => {
      const breakdown = Decomposition.ratio(
        "d",
        names.map((value, i) => {
          const [n0, d0, n1, d1] = figures[i]!
          return {
            value,
            before: { numerator: d0 === 0 ? 0 : n0, denominator: d0 },
            after: { numerator: d1 === 0 ? 0 : n1, denominator: d1 }
          }
        })
      )
      const scale = Math.max(1, Math.abs(breakdown.before), Math.abs(breakdown.after))
      for (const part of breakdown.parts) {
        expect(Math.abs(part.rate! + part.mix! - part.change)).toBeLessThanOrEqual(1e-9 * scale)
      }
      // A period with no denominator at all has no ratio: nothing to split.
      const some = figures.slice(0, names.length)
      if (some.every((f) => f[1] === 0) || some.every((f) => f[3] === 0)) return
      const parts = breakdown.parts.reduce((t, p) => t + p.change, 0)
      expect(Math.abs(parts - breakdown.change)).toBeLessThanOrEqual(1e-9 * scale)
    }
  )

  it("ranks a contribution by how far a value's share stands out against its base", () => {
    const returns = Decomposition.contribution([
      { value: "Laptops", figure: 30, base: 100 },
      { value: "Phones", figure: 60, base: 100 },
      { value: "Audio", figure: 10, base: 200 }
    ])
    expect(returns.map((c) => c.value)).toEqual(["Phones", "Laptops", "Audio"])
    expect(returns[0]).toMatchObject({ share: 0.6, base_share: 0.25, lift: 2.4 })
    expect(Decomposition.contribution([{ value: "a", figure: 1 }, { value: "b", figure: 3 }]).map((c) => c.share))
      .toEqual([0.75, 0.25])
  })
})
