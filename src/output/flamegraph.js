/* flamegraph.js - the script of the flame graph SVG (output/flamegraph.c):
 * the picture is laid out in C and reads without it; this only re-lays
 * out on zoom, recolours on search and switches the colouring. */
var svg,frames=[],details,matched,unzoom,W,XP=10,byModule=false;
function init(){svg=document.documentElement;W=+svg.getAttribute('width');
 details=document.getElementById('details');matched=document.getElementById('matched');
 unzoom=document.getElementById('unzoom');
 var gs=document.querySelectorAll('g.f');
 for(var i=0;i<gs.length;i++){var g=gs[i],r=g.querySelector('rect');
  g._x=+r.getAttribute('x');g._w=+r.getAttribute('width');g._d=+g.getAttribute('data-d');
  g._a=g.getAttribute('data-a');g._name=g.getAttribute('data-n');g._fill=r.getAttribute('fill');
  g.onmouseover=over;g.onmouseout=out;g.onclick=click;frames.push(g);}
 var q=new URLSearchParams(location.search),s=q.get('s'),z=q.get('z');
 if(!s&&location.hash.indexOf('#search=')==0)s=decodeURIComponent(location.hash.slice(8));
 if(s)search(s);
 if(z)frames.some(function(e){if(e._name==z){zoom(e);return true;}return false;});
 var ctl={unzoom:resetZoom,clear:clearSearch,search:askSearch,colour:toggleColour};
 Object.keys(ctl).forEach(function(id){var t=document.getElementById(id);if(t)t.onclick=ctl[id];});}
function over(){details.textContent=this.querySelector('title').textContent.replace(/\n/g,'  |  ');}
function out(){details.textContent=' ';}
function click(){zoom(this);}
function place(e,x,w){var r=e.querySelector('rect'),t=e.querySelector('text');
 r.setAttribute('x',x.toFixed(2));r.setAttribute('width',w.toFixed(2));t.setAttribute('x',(x+3).toFixed(2));
 var n=Math.floor((w-6)/7.1),s=e._name;t.textContent=n<3?'':(s.length<=n?s:s.slice(0,n-2)+'..');}
function zoom(g){var a=g._a,x=g._x,w=g._w,d=g._d,full=W-2*XP,k=full/w;
 frames.forEach(function(e){if(e._a!=a)return;e.style.display='';e.style.opacity='';
  if(e._d<d&&e._x<=x+1e-3&&e._x+e._w>=x+w-1e-3){place(e,XP,full);e.style.opacity='0.5';}
  else if(e._d>=d&&e._x>=x-1e-3&&e._x+e._w<=x+w+1e-3)place(e,XP+(e._x-x)*k,e._w*k);
  else e.style.display='none';});
 unzoom.style.opacity='1';}
function resetZoom(){frames.forEach(function(e){e.style.display='';e.style.opacity='';place(e,e._x,e._w);});
 unzoom.style.opacity='0';}
function fillOf(e){if(!byModule)return e._fill;var h=e.getAttribute('data-mh');
 return h?'hsl('+h+',55%,62%)':e._fill;}
function toggleColour(){byModule=!byModule;frames.forEach(function(e){e.querySelector('rect').setAttribute('fill',fillOf(e));});
 document.getElementById('colour').textContent=byModule?'Colour: module':'Colour: kind';}
function search(term){var re;try{re=new RegExp(term);}catch(err){matched.textContent='bad regex';return;}
 var spans=[];frames.forEach(function(e){var r=e.querySelector('rect');
  if(e._d>0&&re.test(e._name)){r.setAttribute('fill','rgb(230,0,230)');if(e._a=='0')spans.push([e._x,e._x+e._w]);}
  else r.setAttribute('fill',fillOf(e));});
 spans.sort(function(p,q){return p[0]-q[0];});var cov=0,end=-1;
 spans.forEach(function(s){if(s[0]>=end){cov+=s[1]-s[0];end=s[1];}else if(s[1]>end){cov+=s[1]-end;end=s[1];}});
 matched.textContent=(100*cov/(W-2*XP)).toFixed(1)+'% matched';matched.setAttribute('data-term',term);}
function askSearch(){var t=prompt('Search (regex):','');if(t)search(t);}
function clearSearch(){frames.forEach(function(e){e.querySelector('rect').setAttribute('fill',fillOf(e));});matched.textContent=' ';}
/* the picture's elements follow this script: start once they are all there */
window.addEventListener('load',init);
