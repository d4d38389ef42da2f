import type { Store } from '../../src/store/index.js';

/** The payloads of a topic's changes the store commits from now on, as its consumers hear them (src/store/commit-feed.ts). */
export const heardChanges = (store: Store, topic: string): any[] => {
  const heard: any[] = [];
  store.feed.subscribe(topic, (entries) => heard.push(...entries.filter((entry) => entry.change).map((entry) => entry.payload)));
  return heard;
};
