// The floor of durable small files (bench/durable-floor.sh): 2,000 x 64 KiB written by THREADS
// threads into DIR. MODE 0: written, nothing synced; 1: each fdatasynced, renamed from .part;
// 2: all written, one syncfs, renamed. The directory fsynced in 1 and 2.
//   usage: floor MODE DIR [THREADS=16]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <sys/stat.h>
static int N=2000, SZ=65536, T=16; static char *buf; static char dir[512]; static int mode;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static int next=0; static pthread_mutex_t mu=PTHREAD_MUTEX_INITIALIZER;
static void *worker(void*a){
  char p[600],q[600];
  for(;;){pthread_mutex_lock(&mu);int i=next++;pthread_mutex_unlock(&mu);if(i>=N)break;
    snprintf(p,sizeof p,"%s/f%d.part",dir,i);snprintf(q,sizeof q,"%s/f%d",dir,i);
    int fd=open(mode==0?q:p,O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC,0644);
    for(int o=0;o<SZ;o+=16384) pwrite(fd,buf+o,16384,o);
    if(mode==1){fdatasync(fd);}
    close(fd);
    if(mode==1) rename(p,q);
  }
  return 0;}
int main(int c,char**v){mode=atoi(v[1]);snprintf(dir,sizeof dir,"%s",v[2]);if(c>3)T=atoi(v[3]);
  buf=malloc(SZ);for(int i=0;i<SZ;i++)buf[i]=rand();
  mkdir(dir,0755);double s=now();
  pthread_t th[64];for(int i=0;i<T;i++)pthread_create(&th[i],0,worker,0);for(int i=0;i<T;i++)pthread_join(th[i],0);
  if(mode==1){int d=open(dir,O_RDONLY);fsync(d);close(d);}
  if(mode==2){int d=open(dir,O_RDONLY);syncfs(d);char p[600],q[600];
    for(int i=0;i<N;i++){snprintf(p,sizeof p,"%s/f%d.part",dir,i);snprintf(q,sizeof q,"%s/f%d",dir,i);rename(p,q);} fsync(d);close(d);}
  double e=now();printf("mode %d threads %d: %.3f s, %.0f files/s\n",mode,T,e-s,N/(e-s));}
