// The objects a parse makes for every sample and family, as classes rather than object literals. V8 tracks
// each literal's allocation site and, when one scavenge finds most of a site's objects alive, allocates that
// site's objects in the old generation from then on ("pretenuring"). A scavenge that lands in the middle of a
// fleet's burst of scrapes finds the samples being parsed alive, and every later scrape's samples then went
// straight to the old generation as garbage for the major GCs (24–36 a minute on 32 workers). Instances of a
// class carry no allocation site, so they stay young and die in the scavenges.
import type { MetricFamily, MetricType, Sample } from './types';

export class ParsedSample implements Sample {
  declare timestampMs?: number;
  declare exemplar?: Sample['exemplar'];
  name: string;
  labels: Record<string, string>;
  value: number;

  constructor(name: string, labels: Record<string, string>, value: number) {
    this.name = name;
    this.labels = labels;
    this.value = value;
  }
}

export class ParsedFamily implements MetricFamily {
  declare help?: string;
  declare unit?: string;
  name: string;
  type: MetricType;
  samples: Sample[];

  constructor(name: string, type: MetricType) {
    this.name = name;
    this.type = type;
    this.samples = new Array<Sample>();
  }
}
