#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/resource.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static double cpu(int who){struct rusage r;getrusage(who,&r);return r.ru_utime.tv_sec+r.ru_utime.tv_usec*1e-6+r.ru_stime.tv_sec+r.ru_stime.tv_usec*1e-6;}
int main(int argc,char**argv){
  int N=argc>1?atoi(argv[1]):50000; int work=argc>2?atoi(argv[2]):0;
  int sv[2]; socketpair(AF_UNIX,SOCK_STREAM,0,sv);
  size_t m=(32u<<20)/8; uint64_t*buf=malloc(m*8); for(size_t i=0;i<m;i++)buf[i]=i*2654435761u;
  double w0=now();
  pid_t p=fork();
  if(p==0){ char c; uint64_t x=1,s=0; for(int i=0;i<N;i++){ read(sv[1],&c,1); for(int k=0;k<work;k++){x^=x<<13;x^=x>>7;x^=x<<17;s+=buf[x%m];} write(sv[1],&c,1);} _exit(s==42);}
  char c='x'; uint64_t x=7,s=0;
  for(int i=0;i<N;i++){ write(sv[0],&c,1); read(sv[0],&c,1); for(int k=0;k<work;k++){x^=x<<13;x^=x>>7;x^=x<<17;s+=buf[x%m];}}
  int st; waitpid(p,&st,0);
  double w1=now();
  printf("{\"pp_wall\":%.4f,\"pp_cpu\":%.4f}\n",w1-w0,cpu(RUSAGE_SELF)+cpu(RUSAGE_CHILDREN));
  return s==42;}
