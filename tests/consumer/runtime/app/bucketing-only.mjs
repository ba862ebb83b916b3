// A bucketing-config validator's script: its bundle holds partkit's bucketing and nothing else.
import {validateBucketingConfig} from 'partkit';

try {
  validateBucketingConfig({round_robin_bucket_execution: true, bucket_total: 6, bucket_ranges: '2-3,5'});
  document.body.dataset.result = 'ok';
} catch (error) {
  document.body.dataset.result = `error: ${error?.message}`;
}
