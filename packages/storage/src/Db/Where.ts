/** A parameterised WHERE clause built from optional filters (`?` becomes the next `$n`). */
export class Where {
  readonly params: Array<unknown> = []
  private readonly parts: Array<string> = []

  constructor(initial: ReadonlyArray<unknown> = []) {
    this.params.push(...initial)
  }

  /** Adds `condition` with its `?` placeholders bound to `values`, unless a value is undefined. */
  add(condition: string, ...values: ReadonlyArray<unknown>): this {
    if (values.some((v) => v === undefined)) return this
    let i = 0
    this.parts.push(condition.replace(/\?/g, () => `$${this.bind(values[i++])}`))
    return this
  }

  /** Binds a value and returns its placeholder number. */
  bind(value: unknown): number {
    this.params.push(value)
    return this.params.length
  }

  get sql(): string {
    return this.parts.length === 0 ? "" : `WHERE ${this.parts.join(" AND ")}`
  }
}
