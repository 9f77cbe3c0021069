#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
static double now(clockid_t c){struct timespec t;clock_gettime(c,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  // A: integer compute
  double w0=now(CLOCK_MONOTONIC),c0=now(CLOCK_THREAD_CPUTIME_ID);
  uint64_t x=88172645463325252ull,s=0;
  for(long i=0;i<200000000L;i++){x^=x<<13;x^=x>>7;x^=x<<17;s+=x&1023;}
  double w1=now(CLOCK_MONOTONIC),c1=now(CLOCK_THREAD_CPUTIME_ID);
  // B: pointer chase over 256 MiB
  size_t n=(256u<<20)/8; size_t*a=malloc(n*8);
  for(size_t i=0;i<n;i++)a[i]=i;
  for(size_t i=n-1;i>0;i--){x^=x<<13;x^=x>>7;x^=x<<17;size_t j=x%i;size_t t=a[i];a[i]=a[j];a[j]=t;}
  // make a single cycle: follow a permutation order
  size_t*b=malloc(n*8); for(size_t i=0;i<n;i++) b[a[i]]=a[(i+1)%n];
  double w2=now(CLOCK_MONOTONIC),c2=now(CLOCK_THREAD_CPUTIME_ID);
  size_t p=0; for(long i=0;i<5000000L;i++) p=b[p];
  double w3=now(CLOCK_MONOTONIC),c3=now(CLOCK_THREAD_CPUTIME_ID);
  // C: random access within 4 MiB (cache-size)
  size_t m=(4u<<20)/8; size_t q=0;
  for(size_t i=0;i<m;i++) a[i]=(i*2654435761u)%m;
  double w4=now(CLOCK_MONOTONIC),c4=now(CLOCK_THREAD_CPUTIME_ID);
  for(long i=0;i<50000000L;i++){ q=a[(q+i)%m]; }
  double w5=now(CLOCK_MONOTONIC),c5=now(CLOCK_THREAD_CPUTIME_ID);
  printf("{\"int_wall\":%.4f,\"int_cpu\":%.4f,\"chase_wall\":%.4f,\"chase_cpu\":%.4f,\"l3_wall\":%.4f,\"l3_cpu\":%.4f,\"sink\":%lu}\n",
    w1-w0,c1-c0,w3-w2,c3-c2,w5-w4,c5-c4,(unsigned long)(s+p+q));
  return 0;}
