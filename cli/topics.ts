/** Topic help from the command ids: `forms` → "forms: create, delete, get, …". */
export function topicDescriptions(ids: string[]): Record<string, { description: string }> {
  const children = new Map<string, Set<string>>();
  for (const id of ids) {
    const parts = id.split(':');
    for (let i = 1; i < parts.length; i++) {
      const topic = parts.slice(0, i).join(':');
      children.set(topic, (children.get(topic) ?? new Set()).add(parts[i]));
    }
  }
  return Object.fromEntries(
    [...children].map(([topic, next]) => [
      topic,
      { description: `${topic.replaceAll(':', ' ')}: ${[...next].sort().join(', ')}` },
    ]),
  );
}
