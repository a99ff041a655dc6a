const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A UUID as text (a run's or a message's id): checked before it reaches a `uuid` column, which refuses anything else. */
export const isUuid = (text: string): boolean => UUID.test(text);
