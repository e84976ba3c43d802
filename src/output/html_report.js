/* html_report.js - the HTML report's flame graph (on a canvas), search,
 * functions table and callers/callees sandwich, from the JSON in
 * #prof-data (output/html.c).  html_app.js, loaded after it in the same
 * page, uses its globals (D, S, N, K, render, sandwich, search...).
 * The SVG keeps its own small script (flamegraph.js): the SVG is laid out
 * in C and reads without script, while this page draws from the JSON on
 * a canvas, which a page of a million samples needs; they share no code. */
var D=JSON.parse(document.getElementById('prof-data').textContent),S=D.strings,N=D.nodes,K=[],zoomId=0,re=null;
N.forEach(function(n,i){K.push([]);if(i)K[n[0]].push(i);});
function nm(i){return i?S[N[i][1]]:'all';}
function key(i){return S[N[i][1]]+'\t'+S[N[i][2]];}
function fmt(v){return D.unit=='samples'?v+' samples':D.unit=='bytes'?(v>=1048576?(v/1048576).toFixed(2)+' MiB':v>=1024?(v/1024).toFixed(1)+' KiB':v+' B'):D.unit=='allocations'?v+' allocations':(v/1e6).toFixed(3)+' ms';}
function pct(v){return (N[0][7]?100*v/N[0][7]:0).toFixed(2)+'%';}
function hue(s){var h=0;for(var i=0;i<s.length;i++)h=(h*31+s.charCodeAt(i))>>>0;return h;}
function dcolour(i){var n=N[i],d=(N[0][7]?n[7]/N[0][7]:0)-(D.base_total?n[9]/D.base_total:0),x=Math.min(1,Math.abs(d)/D.max_delta);
 var c=220-(190*x|0);return d>0?'rgb(255,'+c+','+c+')':d<0?'rgb('+c+','+c+',255)':'rgb(225,225,225)';}
function colour(i){if(D.diff)return dcolour(i);var n=N[i],h=hue(S[n[1]]),v=(h%100)/100;
 if(n[6]&1)return 'rgb('+(50+60*v|0)+','+(165+55*v|0)+','+(165+55*v|0)+')';
 if(n[5]==1)return 'rgb('+(190+65*v|0)+','+(90+65*v|0)+',0)';
 if(n[5]==2)return 'rgb(40,'+(200+55*v|0)+',40)';
 if(n[6]&2)return 'rgb('+(60+50*v|0)+','+(120+60*((h>>8)%100)/100|0)+','+(200+55*((h>>16)%100)/100|0)+')';
 if(n[5]>=3)return 'rgb(180,180,190)';
 return 'rgb('+(205+50*v|0)+','+(230*((h>>8)%100)/100|0)+','+(55*((h>>16)%100)/100|0)+')';}
function tip(i){var n=N[i],t=nm(i);if(n[6]&1)t+=' [inlined]';if(n[6]&2)t+=' [python]';if(n[5]==1)t+=' [kernel]';
 if(S[n[2]])t+=' ('+S[n[2]]+')';if(S[n[3]])t+='  '+S[n[3]]+':'+n[4];t+='  '+fmt(n[7])+' ('+pct(n[7])+')';
 if(D.diff)t+=', base '+fmt(n[9])+' ('+(D.base_total?100*n[9]/D.base_total:0).toFixed(2)+'%)';return t;}
function depthOf(i){var d=0;while(i){i=N[i][0];d++;}return d;}
/* The flame graph is drawn on one canvas: thousands of positioned
 * boxes cost the page a style and layout pass each time (0.1-0.3 s on
 * a 1M-sample page).  FB keeps what was drawn, for hit tests; the
 * names drawn go to #flame's data-names. */
var FB=[],FW=new Map();
function fit(g,s,w){var f=FW.get(s);if(f===undefined){f=g.measureText(s).width;FW.set(s,f);}
 if(f<=w)return s;var n=Math.floor(s.length*w/f)-1;return n<2?'':s.slice(0,n)+'…';}
function render(){var box=document.getElementById('flame'),W=D.width||box.clientWidth||1100;
 var z=zoomId,zd=depthOf(z),sc=W/N[z][7],H=18,items=[],maxd=0;
 for(var a=N[z][0],ad=zd-1;z&&a!==undefined&&ad>=0;a=a?N[a][0]:undefined,ad--){items.push([a,0,W,ad,1]);if(!a)break;}
 (function walk(i,x,d){var w=N[i][7]*sc;if(w<0.5)return;items.push([i,x,w,d,0]);if(d>maxd)maxd=d;
  K[i].forEach(function(c){walk(c,x,d+1);x+=N[c][7]*sc;});})(z,0,zd);
 if(zd>maxd)maxd=zd;var ht=(maxd+1)*H+2,r=window.devicePixelRatio||1;box.style.height=ht+'px';
 var cv=box.querySelector('canvas')||box.appendChild(document.createElement('canvas'));
 cv.width=Math.ceil(W*r);cv.height=Math.ceil(ht*r);cv.style.width=W+'px';cv.style.height=ht+'px';
 var g=cv.getContext('2d'),names=new Set();g.scale(r,r);g.font='11px system-ui,Verdana,sans-serif';g.textBaseline='middle';
 FB=[];items.forEach(function(it){var i=it[0],n=nm(i),x=it[1],w=Math.max(it[2],1),
  y=D.inverted?it[3]*H:(maxd-it[3])*H,c=re&&i&&re.test(n)?'#e600e6':colour(i);
  g.globalAlpha=it[4]?0.55:1;g.fillStyle=c;g.fillRect(x,y+1,Math.max(w-1,1),H-2);
  if(N[i][6]&1){g.setLineDash([3,2]);g.strokeStyle='#333';g.strokeRect(x+0.5,y+1.5,w-2,H-3);g.setLineDash([]);}
  if(w>28){g.fillStyle='#000';g.fillText(fit(g,n,w-6),x+3,y+H/2);}
  FB.push([i,x,w,y,c]);names.add(n);});
 g.globalAlpha=1;box.setAttribute('data-names',JSON.stringify(Array.from(names)));}
function boxAt(ev){var rc=ev.currentTarget.getBoundingClientRect(),x=ev.clientX-rc.left,y=ev.clientY-rc.top;
 for(var k=FB.length-1;k>=0;k--){var b=FB[k];if(x>=b[1]&&x<b[1]+b[2]&&y>=b[3]&&y<b[3]+18)return b[0];}return -1;}
/* one handler for the canvas: click zooms, hover says what is under the pointer */
(function(){var box=document.getElementById('flame');
 box.onclick=function(ev){var i=boxAt(ev);if(i<0)return;zoomId=i;render();if(i)sandwich(key(i));};
 box.onmousemove=function(ev){var i=boxAt(ev),t=i<0?'':tip(i);box.style.cursor=i<0?'':'pointer';
  if(box.title!=t)box.title=t;document.getElementById('details').textContent=t;};})();
function search(t){try{re=t?new RegExp(t):null;}catch(err){document.getElementById('matched').textContent='bad regex';return;}
 var m=0;(function walk(i){if(i&&re&&re.test(nm(i))){m+=N[i][7];return;}K[i].forEach(walk);})(0);
 document.getElementById('matched').textContent=re?(N[0][7]?100*m/N[0][7]:0).toFixed(1)+'% matched':'';
 document.getElementById('q').value=t||'';render();}
function fill(id,rows,tot){var tb=document.getElementById(id);tb.textContent='';
 rows.sort(function(a,b){return b[1]-a[1];}).forEach(function(r){var tr=document.createElement('tr');
  [r[0].split('\t')[0],fmt(r[1]),(tot?100*r[1]/tot:0).toFixed(1)+'%'].forEach(function(c,j){
   var td=document.createElement('td');td.textContent=c;if(j)td.className='n';tr.appendChild(td);});
  if(r[0]!='(root)')tr.onclick=function(){sandwich(r[0]);};tb.appendChild(tr);});}
function sandwich(k){var callers={},callees={},tot=0;
 (function walk(i,inside){var me=i&&key(i)==k,outer=me&&!inside;
  if(outer){tot+=N[i][7];var pk=N[i][0]?key(N[i][0]):'(root)';callers[pk]=(callers[pk]||0)+N[i][7];
   K[i].forEach(function(c){callees[key(c)]=(callees[key(c)]||0)+N[c][7];});}
  K[i].forEach(function(c){walk(c,inside||me);});})(0,false);
 var name=k.split('\t')[0];document.getElementById('sw-name').textContent=name+'  -  total '+fmt(tot)+' ('+pct(tot)+')';
 fill('callers',Object.keys(callers).map(function(x){return [x,callers[x]];}),tot);
 fill('callees',Object.keys(callees).map(function(x){return [x,callees[x]];}),tot);
 var rows=document.querySelectorAll('#fns tbody tr');rows.forEach(function(r){
  r.className=(r.getAttribute('data-k')==k)?'sel':'';});}
function sortBy(col,num){var tb=document.querySelector('#fns tbody'),rows=[].slice.call(tb.rows);
 var th=document.querySelectorAll('#fns th')[col],desc=th.getAttribute('data-dir')!='desc';
 th.setAttribute('data-dir',desc?'desc':'asc');
 rows.sort(function(a,b){var x=a.cells[col].getAttribute('data-v'),y=b.cells[col].getAttribute('data-v');
  var c=num?(+x)-(+y):x.localeCompare(y);return desc?-c:c;});rows.forEach(function(r){tb.appendChild(r);});}
document.querySelectorAll('#fns tbody tr').forEach(function(r){r.onclick=function(){sandwich(r.getAttribute('data-k'));};});
document.getElementById('q').onkeyup=function(ev){if(ev.key=='Enter')search(this.value);};
/* the controls' handlers (the page's HTML holds no script): a column
 * heading sorts by it, numerically for Self, Self%, Total and Total% */
document.querySelectorAll('#fns th').forEach(function(th,c){th.onclick=function(){sortBy(c,c>=2&&c<=5);};});
document.getElementById('qgo').onclick=function(){search(document.getElementById('q').value);};
document.getElementById('qclear').onclick=function(){search('');};
document.getElementById('unzoom').onclick=function(){zoomId=0;render();};
(function(){var b=document.getElementById('procs-toggle');if(!b)return;
 b.onclick=function(){var m=document.getElementById('procs-more');m.hidden=!m.hidden;
  b.textContent=m.hidden?b.getAttribute('data-more'):'fewer';};})();
window.onresize=render;if(!D.app)render();
(function(){var q=new URLSearchParams(location.search),s=q.get('s'),h=location.hash,c=q.get('sort');
 if(c!==null)sortBy(+c,+c>=2);
 if(!s&&h.indexOf('#search=')==0)s=decodeURIComponent(h.slice(8));if(s)search(s);
 if(h.indexOf('#fn=')==0){var f=decodeURIComponent(h.slice(4));for(var i=1;i<N.length;i++)if(nm(i)==f){sandwich(key(i));break;}}
 else{var r=document.querySelector('#fns tbody tr');if(r)sandwich(r.getAttribute('data-k'));}})();
